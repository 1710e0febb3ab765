/**
 * Prompt sections (seed 000's trinkets): small independent providers, each rendering one part
 * of a request from the section context. A section belongs to a region (regions.ts orders and
 * filters them), says whether its output is stable across turns (stable sections form the
 * cached prefix), and where its output goes: into `instructions`, into a developer/user message,
 * or as ready-made input items (conversation turns). Rendering "" or [] means "absent this turn";
 * a section that throws is skipped and recorded in the manifest (unless it is `required`).
 */
import type { InputItem } from "../model/types.ts";
import type { TouchedEntity } from "../memory/touched.ts";
import type { RollingSummary } from "../memory/summary.ts";
import type { Turn, TurnItem } from "../memory/turn.ts";
import type { WorkingSetItem } from "../memory/working-set.ts";
import type { OverflowPolicy } from "../memory/working-set-policy.ts";
import type { WorkingState } from "../state/schema.ts";
import type { GitInfo } from "./git-info.ts";

export type ItemType =
  | "tool"
  | "core_rules"
  | "project_instructions"
  | "personal_preferences"
  | "summary"
  | "turn"
  | "working_state"
  | "volatile_context"
  | "working_set_item"
  | "current_task"
  | "task_step"
  | "instructions"
  | "evicted_turns";

export type ItemFormat = "json" | "markdown" | "text" | "toon" | "items";

/** `instructions`: part of the instructions string; `message`: part of a role message; `items`: input items as given. */
export type Placement = "tools" | "instructions" | "message" | "items";

export interface Piece {
  /** Unique within a request, stable across turns for the same content ("turn:12", "ws:ws-1a2b"). */
  id: string;
  type: ItemType;
  format: ItemFormat;
  /** Why it is in the prompt: a short code ("always_included", "recent_turn", ...). */
  reason: string;
  /** The same, for a human ("turns 1–176 folded out of the window"). */
  detail?: string;
  placement: Placement;
  /** For `message`: the role of the message (contiguous pieces of one role share a message). */
  role?: "developer" | "user";
  /** For `instructions` and `message`: the text, ending in "\n" so pieces join without merging tokens. */
  text?: string;
  /** For `items`. */
  items?: InputItem[];
  /** The content compared for deduplication when it differs from `text` (the body inside the tags). */
  body?: string;
  /** Parts of the section's source left out of this piece (state items over the cap), for the manifest. */
  dropped?: Array<{ id: string; reason: string; detail?: string; tokens?: number }>;
  /** Filled in by the builder from the section. */
  region?: string;
  stable?: boolean;
  required?: boolean;
}

export interface InstructionFile {
  /** Workspace-relative path, shown in the prompt and the manifest. */
  path: string;
  text: string;
}

/** The turn being answered: the user's message and, during the tool loop, the steps so far. */
export interface CurrentTask {
  userText: string;
  /** Steps of this turn so far, with full tool outputs (capped by toolOutputTokens). */
  items: readonly TurnItem[];
}

export interface SectionContext {
  model: string;
  sessionId: string;
  turn: number;
  /** Time the turn started: volatile sections only (the stable part never carries a timestamp). */
  now: Date;
  coreRules: string;
  project: InstructionFile | undefined;
  personal: InstructionFile | undefined;
  summary: RollingSummary | undefined;
  turns: readonly Turn[];
  /** The window's block size: turns settle into the stable prefix a block at a time. */
  windowBlockTurns: number;
  state: WorkingState | undefined;
  /** The state as the cached part of the prompt shows it; `state` minus this is sent as changes. */
  stateSnapshot: { turn: number; state: WorkingState } | undefined;
  /** Token cap of the state projection (the cutoff lowers it). */
  stateCap: number;
  workingSet: readonly WorkingSetItem[];
  overflowPolicy: OverflowPolicy;
  /** The current task's files (for the working set's attention boost). */
  attention: readonly string[];
  touchedFiles: readonly TouchedEntity[];
  touchedSymbols: readonly TouchedEntity[];
  git: GitInfo | undefined;
  task: CurrentTask | undefined;
  /** For summary requests: the turns being folded. */
  evictedTurns: readonly Turn[];
  /** Token cap of one function output in the prompt (the cutoff lowers it). */
  toolOutputTokens: number;
  /** Exact o200k count (the tokenizer is loaded before sections render). */
  count: (text: string) => number;
}

export type SectionOutput = string | Piece[];

export interface Section {
  id: string;
  region: string;
  stable: boolean;
  /** A required section that throws fails the build (core rules, the current task). */
  required?: boolean;
  /** Defaults for a section that renders a plain string. */
  placement: Placement;
  type: ItemType;
  format: ItemFormat;
  reason: string;
  role?: "developer" | "user";
  render(ctx: SectionContext): SectionOutput | Promise<SectionOutput>;
}

/** Wraps a body in an XML-style tag, ending in "\n": the form every text piece takes. */
export function tagged(tag: string, body: string, attributes: Record<string, string | number | undefined> = {}): string {
  const attrs = Object.entries(attributes)
    .filter(([, v]) => v !== undefined && v !== "")
    .map(([k, v]) => ` ${k}="${String(v).replaceAll('"', "&quot;")}"`)
    .join("");
  return `<${tag}${attrs}>\n${body.replace(/\n+$/, "")}\n</${tag}>\n`;
}
