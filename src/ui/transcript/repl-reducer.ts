/**
 * The REPL's view state as a pure reducer over agent events and UI actions. Finished items move to
 * `items` (rendered once, in <Static>) as soon as nothing before them can still change; the live
 * turn keeps only what is still moving.
 *
 * Every string that enters the state is made safe for the terminal first (./safe-input.ts,
 * ../terminal-safe-text.ts): the views draw only what is in the state, so no model, tool, file or
 * MCP text reaches the screen with a control sequence in it.
 */
import type { ApprovalDecision, AgentEvent } from "../../agent/events.ts";
import { splitSettled } from "../markdown/stream-split.ts";
import { safeStreamChunk, terminalSafe } from "../terminal-safe-text.ts";
import { safeEvent, safeItem } from "./safe-input.ts";
import {
  isSettledTool,
  type LiveTurn,
  type NewItem,
  type TranscriptItem,
  type TurnStopReason,
} from "./transcript-items.ts";

export interface ReplState {
  /** Append-only: <Static> prints each item once. */
  items: TranscriptItem[];
  live: LiveTurn | undefined;
  nextId: number;
}

export type ReplAction =
  | { type: "append"; item: NewItem }
  | { type: "turn_begin"; display: string }
  | { type: "agent"; event: AgentEvent }
  | { type: "approval_answered"; callId: string; decision: ApprovalDecision }
  /** The turn's event stream ended (normally after turn_end, or by a crash of the iterator). */
  | { type: "turn_closed"; stopReason: TurnStopReason };

export const initialReplState: ReplState = { items: [], live: undefined, nextId: 1 };

const REASONING_TAIL = 160;

function emptyLive(): LiveTurn {
  return {
    turn: undefined,
    pending: [],
    openText: "",
    heldText: "",
    itemsPushed: 0,
    streamedChars: 0,
    approval: undefined,
    retry: undefined,
    reasoning: "",
    heldReasoning: "",
  };
}

export function replReducer(state: ReplState, action: ReplAction): ReplState {
  switch (action.type) {
    case "append":
      return appendItems(state, [safeItem(action.item)]);
    case "turn_begin": {
      const withUser = appendItems(state, [{ kind: "user", text: terminalSafe(action.display) }]);
      return { ...withUser, live: emptyLive() };
    }
    case "agent": {
      const event = safeEvent(action.event);
      return state.live ? onAgentEvent(state, state.live, event) : settleEvent(state, event);
    }
    case "approval_answered":
      return state.live ? answerApproval(state, state.live, action.callId, action.decision) : state;
    case "turn_closed":
      return state.live ? closeTurn(state, state.live, action.stopReason, "") : state;
  }
}

/**
 * Events of the settle step: no turn is live (the turn ended with `turn_end`); the controller then
 * runs `settle`, a step of its own, whose fold, promotions or failure go straight to the transcript.
 */
function settleEvent(state: ReplState, event: AgentEvent): ReplState {
  switch (event.type) {
    case "window_slid":
      return appendItems(state, [{ kind: "notice", tone: "info", text: `window slid: ${event.foldedTurns} turn(s) folded into the summary (${event.summaryTokens} tokens)` }]);
    case "notice":
      return appendItems(state, [{ kind: "notice", tone: "warning", text: event.message }]);
    case "memory_updated":
      return appendItems(state, [memoryNotice(event)]);
    case "error":
      return appendItems(state, [{ kind: "notice", tone: "error", text: event.message, ...(event.hint === undefined ? {} : { hint: event.hint }) }]);
    default:
      return state;
  }
}

function appendItems(state: ReplState, items: NewItem[]): ReplState {
  if (items.length === 0) return state;
  let nextId = state.nextId;
  const added = items.map((item) => ({ ...item, id: `i${nextId++}` }) as TranscriptItem);
  return { ...state, items: [...state.items, ...added], nextId };
}

/** Gives new items ids, queues them behind the live turn's pending items and commits what it can. */
function pushPending(state: ReplState, live: LiveTurn, items: NewItem[]): ReplState {
  let nextId = state.nextId;
  const added = items.map((item) => ({ ...item, id: `i${nextId++}` }) as TranscriptItem);
  return commit(
    { ...state, nextId },
    { ...live, pending: [...live.pending, ...added], itemsPushed: live.itemsPushed + added.length },
  );
}

/** Moves the longest finished prefix of the live turn's pending items into <Static>. */
function commit(state: ReplState, live: LiveTurn): ReplState {
  let cut = 0;
  while (cut < live.pending.length) {
    const item = live.pending[cut];
    if (item?.kind === "tool" && !isSettledTool(item.tool)) break;
    cut++;
  }
  if (cut === 0) return { ...state, live };
  return {
    ...state,
    items: [...state.items, ...live.pending.slice(0, cut)],
    live: { ...live, pending: live.pending.slice(cut) },
  };
}

function markdownItems(blocks: string[], live: LiveTurn): NewItem[] {
  return blocks.map((source, index) => ({
    kind: "markdown",
    source: source.trimEnd(),
    gapBefore: live.itemsPushed > 0 || index > 0,
  }));
}

/**
 * Settles finished blocks of the open text; with `all`, the whole open text is settled, and a tail
 * held back for a delta that will not come now (an unfinished escape sequence) is shown safe as it is.
 */
function settleText(state: ReplState, current: LiveTurn, all: boolean): ReplState {
  const live =
    all && current.heldText !== ""
      ? { ...current, openText: current.openText + terminalSafe(current.heldText), heldText: "" }
      : current;
  if (live.openText === "") return commit(state, live);
  const split = splitSettled(live.openText);
  const blocks = all ? [...split.settled, ...(split.open.trim() === "" ? [] : [split.open])] : split.settled;
  const next: LiveTurn = { ...live, openText: all ? "" : split.open };
  if (blocks.length === 0) return commit(state, next);
  // The blocks settled by one update are one <Static> item: a burst of 20,000 paragraphs as 20,000
  // siblings made React's placement quadratic (the REPL froze for ~20 s).
  return pushPending(state, next, markdownItems(blocks.length > 1 ? [blocks.join("\n\n")] : blocks, live));
}

/** A tool call or notice ends the current text run: what was streamed so far is final. */
function endTextRun(state: ReplState, live: LiveTurn): ReplState {
  return settleText(state, live, true);
}

function updateTool(live: LiveTurn, callId: string, patch: (item: TranscriptItem) => TranscriptItem): LiveTurn {
  return {
    ...live,
    pending: live.pending.map((item) => (item.kind === "tool" && item.tool.callId === callId ? patch(item) : item)),
  };
}

function hasTool(live: LiveTurn, callId: string): boolean {
  return live.pending.some((item) => item.kind === "tool" && item.tool.callId === callId);
}

function onAgentEvent(state: ReplState, live: LiveTurn, event: AgentEvent): ReplState {
  switch (event.type) {
    case "turn_start":
      return { ...state, live: { ...live, turn: event.turn } };
    case "text_delta": {
      // Made safe here (not in safeEvent): a sequence cut across deltas is held back and removed whole.
      const safe = safeStreamChunk(live.heldText, event.delta);
      const next = {
        ...live,
        openText: live.openText + safe.text,
        heldText: safe.held,
        streamedChars: live.streamedChars + event.delta.length,
        retry: undefined,
      };
      return settleText(state, next, false);
    }
    case "reasoning_delta": {
      const safe = safeStreamChunk(live.heldReasoning, event.delta);
      const reasoning = (live.reasoning + safe.text).slice(-REASONING_TAIL);
      return { ...state, live: { ...live, reasoning, heldReasoning: safe.held } };
    }
    case "tool_call_start": {
      const ended = endTextRun(state, live);
      const base = ended.live ?? live;
      return pushPending(ended, { ...base, reasoning: "", heldReasoning: "" }, [
        { kind: "tool", tool: { callId: event.callId, name: event.name, target: event.target, status: "running" } },
      ]);
    }
    case "approval_request": {
      const approval = {
        callId: event.callId,
        name: event.name,
        description: event.description,
        ...(event.diff === undefined ? {} : { diff: event.diff }),
        ...(event.command === undefined ? {} : { command: event.command }),
        ...(event.warning === undefined ? {} : { warning: event.warning }),
        ...(event.remember === undefined ? {} : { remember: event.remember }),
        id: event.id,
      };
      let working = endTextRun(state, live);
      let base = working.live ?? live;
      if (!hasTool(base, event.callId)) {
        working = pushPending(working, base, [
          {
            kind: "tool",
            tool: { callId: event.callId, name: event.name, target: event.description, status: "running" },
          },
        ]);
        base = working.live ?? base;
      }
      const waiting = updateTool(base, event.callId, (item) =>
        item.kind === "tool" ? { ...item, tool: { ...item.tool, status: "awaiting_approval" } } : item,
      );
      return { ...working, live: { ...waiting, approval } };
    }
    case "tool_call_end": {
      const status = event.denied ? "denied" : event.isError ? "error" : "done";
      let base = live;
      let working = state;
      if (!hasTool(base, event.callId)) {
        working = pushPending(state, base, [
          { kind: "tool", tool: { callId: event.callId, name: event.name, target: "", status: "running" } },
        ]);
        base = working.live ?? base;
      }
      const updated = updateTool(base, event.callId, (item) =>
        item.kind === "tool"
          ? {
              ...item,
              tool: {
                ...item.tool,
                status,
                summary: event.summary,
                ...(event.diff === undefined ? {} : { diff: event.diff }),
              },
            }
          : item,
      );
      return commit(working, updated);
    }
    case "retry":
      return {
        ...state,
        live: { ...live, retry: { attempt: event.attempt, delayMs: event.delayMs, reason: event.reason } },
      };
    case "memory_updated":
      return pushNotice(state, live, memoryNotice(event));
    case "notice":
      return pushNotice(state, live, { kind: "notice", tone: "warning", text: event.message });
    case "window_slid":
      return pushNotice(state, live, {
        kind: "notice",
        tone: "info",
        text: `window slid: ${event.foldedTurns} turn(s) folded into the summary (${event.summaryTokens} tokens)`,
      });
    case "error":
      return pushNotice(state, live, {
        kind: "notice",
        tone: "error",
        text: event.message,
        ...(event.hint === undefined ? {} : { hint: event.hint }),
      });
    case "turn_end":
      return closeTurn(state, live, event.stopReason, event.text);
    case "session_start":
    case "request_built":
    case "usage":
      return state;
  }
}

/** A memory change; one made after reading repository content may be that content's doing, so it warns. */
function memoryNotice(event: { what: string; afterUntrusted: boolean }): NewItem {
  return event.afterUntrusted
    ? { kind: "notice", tone: "warning", text: `memory changed after reading repository content: ${event.what}` }
    : { kind: "notice", tone: "info", text: `memory: ${event.what}` };
}

function pushNotice(state: ReplState, live: LiveTurn, notice: NewItem): ReplState {
  const ended = endTextRun(state, live);
  return pushPending(ended, ended.live ?? live, [notice]);
}

function answerApproval(state: ReplState, live: LiveTurn, callId: string, decision: ApprovalDecision): ReplState {
  const updated = updateTool(live, callId, (item) =>
    item.kind === "tool" ? { ...item, tool: { ...item.tool, status: "running", decision: decision.kind } } : item,
  );
  return { ...state, live: { ...updated, approval: undefined } };
}

function closeTurn(state: ReplState, live: LiveTurn, stopReason: TurnStopReason, finalText: string): ReplState {
  // A core that answered without streaming deltas still has its final text shown (safe: see safeEvent).
  const withText =
    live.streamedChars === 0 && finalText !== "" ? { ...live, openText: finalText, heldText: "" } : live;
  const settled = settleText(state, withText, true);
  const rest = settled.live ?? withText;
  const stop: NewItem[] = stopReason === "completed" ? [] : [{ kind: "turn_stop", reason: stopReason }];
  let nextId = settled.nextId;
  const tail = [...rest.pending, ...stop.map((item) => ({ ...item, id: `i${nextId++}` }) as TranscriptItem)];
  return { items: [...settled.items, ...tail], live: undefined, nextId };
}
