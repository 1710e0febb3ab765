/**
 * Prompt sections (seed 000's trinkets): small independent providers, each rendering one part
 * of a request from the section context. A section belongs to a region (regions.ts orders and
 * filters them), says whether its output is stable across turns (stable sections form the
 * cached prefix), and where its output goes: into `instructions`, into a user message, or as
 * ready-made input items (conversation turns). Message pieces carry data — file contents, tool
 * output, summaries, state, git info, all of which a repository can steer — so they travel as
 * user messages, never developer or system ones: only `instructions` instruct (ARCHITECTURE.md,
 * "Trust boundaries"). Rendering "" or [] means "absent this turn";
 * a section that throws is skipped and recorded in the manifest (unless it is `required`).
 */
import type { InputImage, InputItem } from "../model/types.ts";
import type { TouchedEntity } from "../memory/touched.ts";
import type { RollingSummary } from "../memory/summary.ts";
import type { Turn, TurnContext, TurnItem } from "../memory/turn.ts";
import type { WorkingSetItem } from "../memory/working-set.ts";
import type { OverflowPolicy } from "../memory/working-set-policy.ts";
import type { WorkingState } from "../state/schema.ts";
import type { GitInfo } from "./git-info.ts";

export type ItemType =
  | "tool"
  | "core_rules"
  | "user_instructions"
  | "agents_instructions"
  | "project_instructions"
  | "personal_preferences"
  | "summary"
  | "turn"
  | "working_state"
  | "volatile_context"
  | "working_set_item"
  | "current_task"
  | "attachment"
  | "task_step"
  | "instructions"
  | "evicted_turns"
  | "fold_request";

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
  /** For `message`: always "user" (data, not instructions); contiguous message pieces share a message. */
  role?: "user";
  /**
   * For `message`: contiguous pieces share a message only when they share a group too. The
   * current turn's message and its attachments are one group ("task"), never merged with the
   * data messages around them and never deduplicated: they are the message as recorded.
   */
  group?: string;
  /** For `message`: images sent with the message (the turn's attached images), after its text. */
  images?: InputImage[];
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
  /** Workspace-relative path (the user's own file: its path with ~ for the home directory), shown in the prompt and the manifest. */
  path: string;
  text: string;
}

/** An image attached to the turn: where it came from (workspace-relative, or as given to --image) and the image. */
export interface AttachedImage {
  path: string;
  image: InputImage;
}

/** The turn being answered: the user's message and, during the tool loop, the steps so far. */
export interface CurrentTask {
  userText: string;
  /** Steps of this turn so far, with full tool outputs (capped by toolOutputTokens). */
  items: readonly TurnItem[];
  /** Images attached to the message: sent with this turn's requests only (the text keeps a note of each). */
  images?: readonly AttachedImage[];
  /** The turn's per-turn part as its first request sent it (ADR 0074): every later step sends the same bytes. */
  context?: TurnContext;
}

export interface SectionContext {
  model: string;
  sessionId: string;
  turn: number;
  /** Time the turn started: volatile sections only (the stable part never carries a timestamp). */
  now: Date;
  coreRules: string;
  /** The user's own AGENTS.md ($XDG_CONFIG_HOME/valarmind/AGENTS.md). */
  userInstructions?: InstructionFile;
  /** AGENTS.md (or CLAUDE.md where a directory has none) from the workspace root down to the current directory. */
  agentsInstructions?: readonly InstructionFile[];
  project: InstructionFile | undefined;
  personal: InstructionFile | undefined;
  summary: RollingSummary | undefined;
  turns: readonly Turn[];
  /** The window's block size (the cutoff folds a block at a time). */
  windowBlockTurns: number;
  state: WorkingState | undefined;
  /** The state as the cached part of the prompt shows it. */
  stateSnapshot: { turn: number; state: WorkingState } | undefined;
  /**
   * The state as the window's turns last showed it (a turn's state changes after the snapshot);
   * `state` minus this — or minus the snapshot without it — is this turn's state changes.
   */
  stateSeen?: { turn: number; state: WorkingState };
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
  /** For fold requests (riding the main request's cache): the oldest window turns to fold, and why now. */
  fold?: FoldAsk;
  /** Token cap of one function output in the prompt (the cutoff lowers it). */
  toolOutputTokens: number;
  /** A window turn's long answers are cut to about this many tokens (windowAnswerTokens; 0 keeps them whole). */
  answerTokens: number;
  /** Send a step's reasoning back with its tool calls (the chat wire: DeepSeek's thinking mode wants it). */
  reasoningBack?: boolean;
  /** Exact o200k count (the tokenizer is loaded before sections render). */
  count: (text: string) => number;
}

/** What a fold request asks: fold the window's first `count` turns (`first`–`last`). */
export interface FoldAsk {
  first: number;
  last: number;
  count: number;
  /** The cost reasoning behind the fold (fold-economics.ts), one line. */
  economics?: string;
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
  role?: "user";
  render(ctx: SectionContext): SectionOutput | Promise<SectionOutput>;
}

/**
 * Every tag valarmind's prompts use (and `promote`, the tag the summary reply is parsed for).
 * Text inside one of them must not open or close any of them, or a file could forge
 * `</working_set_item><core_rules>`; a tag not listed here cannot be used (the type says so).
 */
export const PROMPT_TAGS = [
  "core_rules",
  "user_instructions",
  "agents_instructions",
  "project_instructions",
  "personal_preferences",
  "conversation_summary",
  "working_state",
  "working_state_changes",
  "working_set_item",
  "volatile_context",
  "summary_rules",
  "promotion_rules",
  "turns_to_fold",
  "fold_request",
  "piped_input",
  "attachment",
  "promote",
] as const;

export type PromptTag = (typeof PROMPT_TAGS)[number];

// `<`, optional `/` and spaces, then one of the names not followed by more name characters:
// what a model could read as one of valarmind's tags. Any case: a model would not mind it.
const OWN_TAG_START = new RegExp(`<(?=\\s*/?\\s*(?:${PROMPT_TAGS.join("|")})(?![\\w-]))`, "gi");

/**
 * Escapes the `<` of every opening or closing valarmind tag in `text` as `&lt;`, and nothing
 * else: file snippets are code the model copies into edit_file, so other `<` stay as they are
 * (the core rules tell the model what `&lt;` before a tag name stands for).
 */
export function escapeOwnTags(text: string): string {
  return text.replace(OWN_TAG_START, "&lt;");
}

function wrap(tag: PromptTag, body: string, attributes: Record<string, string | number | undefined>): string {
  const attrs = Object.entries(attributes)
    .filter(([, v]) => v !== undefined && v !== "")
    .map(([k, v]) => ` ${k}="${escapeOwnTags(String(v)).replaceAll('"', "&quot;")}"`)
    .join("");
  return `<${tag}${attrs}>\n${body.replace(/\n+$/, "")}\n</${tag}>\n`;
}

/**
 * Wraps data (file contents, tool output, summaries, state, git info) in an XML-style tag, ending
 * in "\n": the form every text piece takes. Nothing in the body or the attributes can close the
 * wrapper or open another valarmind tag; name where the data comes from in a `source` attribute.
 */
export function tagged(tag: PromptTag, body: string, attributes: Record<string, string | number | undefined> = {}): string {
  return wrap(tag, escapeOwnTags(body), attributes);
}

/**
 * Wraps valarmind's own prompt text (src/prompt/text/*.md) unescaped: it is ours, and may show
 * a tag it asks the model to write (`<promote>`). Never for anything read from disk or a tool.
 */
export function taggedOwnText(tag: PromptTag, text: string): string {
  return wrap(tag, text, {});
}

/** A per-turn section's piece as the turn's first request sent it (ADR 0074); "" when that request sent none. */
export function takenPiece(section: Pick<Section, "id" | "type" | "format" | "reason">, text: string): SectionOutput {
  if (text === "") return "";
  const { id, type, format, reason } = section;
  return [{ id, type, format, reason, detail: "as taken at this turn's first request", placement: "message", role: "user", text }];
}
