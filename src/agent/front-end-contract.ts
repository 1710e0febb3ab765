/**
 * What a front end (the ink REPL) may ask of the core. The REPL holds one `ChatController`,
 * subscribes to the events of each turn and renders the plain data the other methods return.
 * It never touches the model, the disk or the tools itself.
 */
import type { AgentEvent, ApprovalDecision } from "./events.ts";
import type { CostFigures } from "./session-cost.ts";
import type { SlashCommandInfo } from "./slash-catalog.ts";

/** The slash-command catalogue (one list for completion, /help and dispatch) and its pure helpers. */
export { findSlashCommand, helpOutput, parseSlash, unknownCommandOutput, type SlashCommand, type SlashCommandInfo, type SlashCommandSite } from "./slash-catalog.ts";

export type ApprovalMode = "suggest" | "auto-edit" | "full-auto";

export interface StatusSnapshot {
  sessionId: string;
  model: string;
  approvals: ApprovalMode;
  /** Tokens of the last request (estimate until the API reports usage) and the budget. */
  promptTokens: number;
  budgetTokens: number;
  /**
   * The model's context window in tokens (the `contextWindow` setting, else the known window of
   * the model's name), for the share of it beside the budget's; undefined when unknown.
   */
  contextWindowTokens?: number;
  /** Cached share (0..1) of the last request's input, from the API's usage; undefined before any call. */
  cachedShare: number | undefined;
  /** Input + output tokens spent this session. */
  sessionTokens: number;
  /** The session's usage so far (turn and fold requests): cached share, effective input, price estimate. */
  cost?: CostFigures;
  goal: string;
  now: string;
  /** A problem to show inside the UI with what to do (missing API key, invalid state). */
  warnings: string[];
}

/** A titled block of text or a table for slash-command output. */
export interface CommandOutput {
  title: string;
  lines: string[];
  isError?: boolean;
}

export interface SessionListing {
  id: string;
  file: string;
  startedAt: string;
  turns: number;
  firstMessage: string;
  /** The id the transcript's header names, when it is not the file's (the listing uses the file's: that is what opens). */
  headerId?: string;
}

/** A turn of the session's earlier conversation, as a front end shows it after a resume. */
export interface EarlierTurn {
  turn: number;
  /** The user's words as typed; `added` names what the message carried besides ("README.md attached"). */
  user: string;
  added?: string[];
  /** What the model wrote and the tools it called, in order; `target` as `tool_call_start` names it. */
  steps: Array<{ kind: "text"; text: string } | { kind: "tool"; callId: string; name: string; target: string; summary: string; isError: boolean; denied: boolean }>;
  stopReason?: "completed" | "incomplete" | "error" | "aborted" | "max_steps";
  /** `/undo` gave back the files this turn changed. */
  undone?: boolean;
}

/** The newest turns of the conversation a resumed session holds, and how many it holds in all. */
export interface EarlierConversation {
  turns: EarlierTurn[];
  total: number;
}

export interface ChatController {
  status(): StatusSnapshot;
  /**
   * Runs one user turn, then its settle step (a window fold): the turn's events end with
   * `turn_end`; the fold's (`window_slid`, notices) follow. Aborting the signal ends both cleanly.
   * A text that calls a custom command ("/review src/a.ts") is sent as that command's expanded text.
   */
  submit(text: string, signal: AbortSignal): AsyncIterable<AgentEvent>;
  /** Answers the running turn's `approval_request` with this id; false if nothing waits on it. */
  answer(id: string, decision: ApprovalDecision): boolean;
  /**
   * Runs a slash command (without the leading "/"), e.g. ("goal", "ship v1"), ("manifest", "3").
   * A name outside `commands()` is answered with `unknownCommandOutput`, never thrown.
   */
  runCommand(name: string, args: string, signal?: AbortSignal): Promise<CommandOutput>;
  /**
   * The whole slash-command catalogue, the front end's own commands (`runs: "ui"`) and the custom
   * commands (`runs: "prompt"`: the front end sends "/NAME ARGS" through `submit`, which expands it)
   * included: for completion, /help and dispatch.
   */
  commands(): readonly SlashCommandInfo[];
  /** Workspace-relative file paths for `@path` completion. */
  completePath(prefix: string): Promise<string[]>;
  listSessions(): Promise<SessionListing[]>;
  /**
   * The conversation the open session held when it was opened (after `--continue`, `--resume`,
   * `/resume`, a fork): empty for a new session. Turns sent since are the front end's own.
   */
  earlierConversation?(): EarlierConversation;
  /**
   * Prompt history of this repository, oldest first, for up/down in the input editor (the UI never
   * touches the disk). Optional so a controller without persisted history still satisfies the contract.
   */
  loadHistory?(): Promise<string[]>;
  /** Appends one submitted prompt (or slash command) to this repository's history. */
  appendHistory?(text: string): Promise<void>;
  close(): Promise<void>;
}
