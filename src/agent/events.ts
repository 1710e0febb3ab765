/**
 * The one event stream every front end subscribes to (ink REPL, headless printer, JSON printer).
 * Front ends never talk to the model, the disk or the tools; they render these and answer
 * approval requests through the callback carried by `approval_request`.
 */
import type { ModelErrorKind, Usage } from "../model/types.ts";

export type ApprovalDecision =
  | { kind: "allow_once" }
  | { kind: "allow_session" }
  | { kind: "deny"; note?: string };

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
      callId: string;
      name: string;
      description: string;
      diff?: string;
      respond: (decision: ApprovalDecision) => void;
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
  | { type: "usage"; usage: Usage; cachedShare: number }
  | { type: "retry"; attempt: number; delayMs: number; reason: string }
  | { type: "memory_updated"; what: string }
  /** Something the user should know that is not an error (a state file moved aside, a fallback used). */
  | { type: "notice"; message: string }
  | { type: "window_slid"; foldedTurns: number; summaryTokens: number }
  | { type: "error"; kind: ModelErrorKind | "budget" | "tool" | "internal"; message: string; hint?: string }
  | {
      type: "turn_end";
      turn: number;
      text: string;
      stopReason: "completed" | "incomplete" | "error" | "aborted" | "max_steps";
    };

export type AgentEventType = AgentEvent["type"];
