/**
 * A resumed session's earlier conversation as transcript items, printed before the first prompt
 * (and after `/resume`) the way the turns were printed live: the message, the answers, a row per
 * tool call, how a turn that did not complete ended. Only the newest turns that fit in about
 * MAX_EARLIER_LINES lines are printed (always the last one); a first line says how many turns
 * the session holds and how to see them all. The reducer makes every item terminal-safe.
 *
 *   for (const item of earlierItems(controller.earlierConversation(), sessionId)) dispatch({ type: "append", item });
 */
import type { EarlierConversation, EarlierTurn } from "../../agent/front-end-contract.ts";
import { oneLine } from "../../one-line.ts";
import { estimatedLines } from "./reprint-window.ts";
import type { NewItem, TranscriptItem } from "./transcript-items.ts";

/** Lines of earlier conversation printed at most, about (a long session's whole history would take seconds). */
export const MAX_EARLIER_LINES = 1000;

function turnItems(turn: EarlierTurn): NewItem[] {
  const items: NewItem[] = [{ kind: "user", text: turn.user }];
  for (const step of turn.steps) {
    if (step.kind === "text") {
      items.push({ kind: "markdown", source: step.text.trimEnd(), gapBefore: items.length > 1 });
      continue;
    }
    const status = step.denied ? "denied" : step.isError ? "error" : "done";
    items.push({ kind: "tool", tool: { callId: step.callId, name: step.name, target: step.target, status, summary: shortSummary(step.summary) } });
  }
  // A turn the transcript never closed is closed as failed when the session is resumed.
  const stop = turn.stopReason ?? "error";
  if (stop !== "completed") items.push({ kind: "turn_stop", reason: stop });
  if (turn.undone === true) items.push({ kind: "notice", tone: "info", text: `/undo gave back the files turn ${turn.turn} changed` });
  return items;
}

/** The transcript keeps what later prompts carried (a file read is its content): its first line is shown. */
function shortSummary(summary: string): string {
  const all = summary.split("\n").filter((line) => line.trim() !== "");
  const cut = oneLine(all[0] ?? "", 160);
  return all.length > 1 ? `${cut} (+${all.length - 1} more line${all.length === 2 ? "" : "s"})` : cut;
}

const lines = (items: readonly NewItem[]) => items.reduce((n, item) => n + estimatedLines({ ...item, id: "" } as TranscriptItem), 0);

export function earlierItems(conversation: EarlierConversation, sessionId: string, maxLines = MAX_EARLIER_LINES): NewItem[] {
  if (conversation.turns.length === 0) return [];
  const groups: NewItem[][] = [];
  let used = 0;
  for (let i = conversation.turns.length - 1; i >= 0; i--) {
    const turn = conversation.turns[i];
    if (turn === undefined) continue;
    const items = turnItems(turn);
    const own = lines(items);
    if (groups.length > 0 && used + own > maxLines) break;
    groups.unshift(items);
    used += own;
  }
  const shown = groups.length;
  const total = conversation.total;
  const head =
    shown < total
      ? `session ${sessionId} resumed: ${total} earlier turn(s), the last ${shown} below; 'valarmind sessions show ${sessionId}' prints them all`
      : `session ${sessionId} resumed: ${total} earlier turn(s) below`;
  return [{ kind: "notice", tone: "info", text: head }, ...groups.flat()];
}
