/**
 * What the REPL shows, as plain data. Finished items go to ink's <Static> (the terminal's own
 * scrollback); the live turn holds the items still changing.
 */
import type { ApprovalDecision, SessionRemember } from "../../agent/events.ts";
import type { CommandOutput } from "../../agent/front-end-contract.ts";

export type ToolStatus = "running" | "awaiting_approval" | "done" | "error" | "denied";

export interface ToolRowData {
  callId: string;
  name: string;
  target: string;
  status: ToolStatus;
  summary?: string;
  diff?: string;
  /** How the user answered an approval for this call, if one was asked. */
  decision?: ApprovalDecision["kind"];
}

export type NoticeTone = "info" | "warning" | "error";

export type TurnStopReason = "completed" | "incomplete" | "error" | "aborted" | "max_steps";

export type TranscriptItem =
  | { kind: "banner"; id: string; model: string; sessionId: string }
  | { kind: "user"; id: string; text: string }
  | { kind: "markdown"; id: string; source: string; gapBefore: boolean }
  | { kind: "tool"; id: string; tool: ToolRowData }
  | { kind: "notice"; id: string; tone: NoticeTone; text: string; hint?: string }
  | { kind: "command"; id: string; command: string; output: CommandOutput }
  | { kind: "turn_stop"; id: string; reason: Exclude<TurnStopReason, "completed"> };

/** Item payloads before the reducer gives them an id. */
export type NewItem = TranscriptItem extends unknown ? DistributiveOmitId<TranscriptItem> : never;
type DistributiveOmitId<T> = T extends unknown ? Omit<T, "id"> : never;

export interface PendingApproval {
  callId: string;
  name: string;
  description: string;
  diff?: string;
  /** run_shell: the whole command, when the description shows only its start. */
  command?: string;
  /** Why this call asks even where the mode would allow it. */
  warning?: string;
  /** What "allow for this session" would remember; absent: no session choice is offered. */
  remember?: SessionRemember;
  /** The request's id: the answer goes back through `ChatController.answer(id, decision)`. */
  id: string;
}

export interface LiveTurn {
  turn: number | undefined;
  /** Items not yet moved to <Static>, in order (a running tool row holds back what follows it). */
  pending: TranscriptItem[];
  /** Markdown of the current answer not yet settled into blocks (terminal-safe). */
  openText: string;
  /** Raw end of the answer held back until the next delta: an escape sequence it may complete. */
  heldText: string;
  /** Items this turn has produced so far (the first one sits right under the user's message). */
  itemsPushed: number;
  /** Characters of answer text streamed this turn. */
  streamedChars: number;
  approval: PendingApproval | undefined;
  retry: { attempt: number; delayMs: number; reason: string } | undefined;
  /** The tail of the model's reasoning summary, shown dimmed while it thinks (terminal-safe). */
  reasoning: string;
  /** Raw end of the reasoning held back until the next delta, as `heldText`. */
  heldReasoning: string;
}

export function isSettledTool(tool: ToolRowData): boolean {
  return tool.status === "done" || tool.status === "error" || tool.status === "denied";
}
