/**
 * The one event stream every front end subscribes to (ink REPL, headless printer, JSON printer).
 * Front ends never talk to the model, the disk or the tools; they render these and answer an
 * `approval_request` by its id (`answer(id, decision)` on the turn or the session), as Codex's
 * protocol does: every event is data, so `--json` prints each one whole.
 */
import type { ModelErrorKind, Usage } from "../model/types.ts";

/**
 * An answer to an approval request. `allow_session` remembers what the request's `remember`
 * offered under that scope: the whole tool ("tool"), the exact command line ("exact") or its
 * prefix ("prefix"). A scope the request did not offer remembers nothing beyond this call.
 */
export type ApprovalDecision =
  | { kind: "allow_once" }
  | { kind: "allow_session"; scope: SessionScope }
  | { kind: "deny"; note?: string };

export type SessionScope = "tool" | "exact" | "prefix";

/** What "allow for this session" would remember, shown to the user word for word. */
export type SessionRemember =
  /** Every later call of this tool (e.g. all edits), except calls that carry a warning. */
  | { kind: "tool"; tool: string }
  /** run_shell: this exact command line, and the prefix later commands may extend, when one is offered. */
  | { kind: "command"; exact: string; prefix?: string };

/** Notices a script may act on carry a code. */
export type NoticeCode =
  | "untrusted_project_settings"
  | "instruction_file_refused"
  | "sandbox_unavailable"
  | "state_moved_aside"
  /** The session was in use by another process or unreadable; the message went to a new one (ADR 0072). */
  | "session_forked"
  /** Waiting for another process's turn on the same session. */
  | "session_busy"
  /** Damaged transcript lines were skipped and set aside, or a transcript could not be read. */
  | "transcript_damaged"
  /** An MCP server did not start, or stopped; its tools are missing or answer with an error (docs/mcp.md). */
  | "mcp_server_failed"
  /** Some MCP tools were not offered: over their token share, over 200 per server, or invalid definitions (docs/mcp.md). */
  | "mcp_tools_left_out"
  /** An `@path` in the message named nothing, or a file that cannot be attached: it stays as typed (ADR 0079). */
  | "attachment_not_attached"
  /** An attached file was over the cap: only its head and tail are in the message. */
  | "attachment_shortened";

export interface TurnManifestSummary {
  /** Path of the manifest file written for this model call. */
  path: string;
  totalTokens: number;
  budgetTokens: number;
  stablePrefixTokens: number;
}

export type AgentEvent =
  | { type: "session_start"; sessionId: string; transcriptPath: string; resumed: boolean }
  | { type: "turn_start"; turn: number; userText: string }
  | { type: "request_built"; turn: number; step: number; manifest: TurnManifestSummary }
  | { type: "text_delta"; delta: string }
  | { type: "reasoning_delta"; delta: string }
  | { type: "tool_call_start"; callId: string; name: string; target: string }
  | {
      type: "approval_request";
      /** What `answer(id, decision)` names; unique within the session. */
      id: string;
      callId: string;
      name: string;
      description: string;
      diff?: string;
      /** run_shell: the whole command, when the one-line description shows only its start. */
      command?: string;
      /** Why this call asks even where the approval mode would allow it; show it prominently. */
      warning?: string;
      /** What a session answer would remember; absent: only this call can be allowed. */
      remember?: SessionRemember;
    }
  | {
      type: "tool_call_end";
      callId: string;
      name: string;
      summary: string;
      diff?: string;
      isError: boolean;
      denied: boolean;
    }
  /** After each model call; `purpose: "fold"` for a fold (summary) request, which is no step of the turn. */
  | { type: "usage"; usage: Usage; cachedShare: number; purpose?: "fold" }
  | { type: "retry"; attempt: number; delayMs: number; reason: string }
  /**
   * `afterUntrusted`: the change came after this turn read repository content or command output
   * (any tool but the memory tools), so it may have been steered by that content: show it.
   */
  | { type: "memory_updated"; what: string; afterUntrusted: boolean }
  /** Something the user should know that is not an error (a state file moved aside, a fallback used). */
  | { type: "notice"; message: string; code?: NoticeCode }
  /** The window's older half folded into the summary: an event of the settle step, never of a turn. */
  | { type: "window_slid"; foldedTurns: number; summaryTokens: number }
  | { type: "error"; kind: ModelErrorKind | "budget" | "tool" | "internal" | "max_steps" | "loop"; message: string; hint?: string }
  | {
      type: "turn_end";
      turn: number;
      text: string;
      stopReason: "completed" | "incomplete" | "error" | "aborted" | "max_steps";
    };

export type AgentEventType = AgentEvent["type"];

export type TurnEndEvent = Extract<AgentEvent, { type: "turn_end" }>;

/** Answers an `approval_request` by its id; false when nothing with that id is waiting. */
export type AnswerApproval = (id: string, decision: ApprovalDecision) => boolean;
