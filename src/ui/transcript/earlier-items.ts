/**
 * A resumed session's earlier conversation as transcript items, printed before the first prompt
 * (and after `/resume`) the way the turns were printed live: the message as typed (what it carried
 * besides named in a line: "+ README.md attached"), the answers, a row per tool call, how a turn
 * that did not complete ended. Only the newest turns that fit in about MAX_EARLIER_LINES rows at
 * the terminal's width are printed; a newest turn taller than that alone keeps the tail of its
 * answer. A first line says how many turns the session holds and how to see them all. The reducer
 * makes every item terminal-safe.
 *
 *   for (const item of earlierItems(controller.earlierConversation(), sessionId, columns)) dispatch({ type: "append", item });
 */
import type { EarlierConversation, EarlierTurn } from "../../agent/front-end-contract.ts";
import { oneLine } from "../../one-line.ts";
import { markdownTail } from "./reprint-window.ts";
import type { NewItem } from "./transcript-items.ts";

/** Rows of earlier conversation printed at most, about (a long session's whole history would take seconds). */
export const MAX_EARLIER_LINES = 1000;
/** A long message (a paste) shows its first lines; the live view showed it as a chip. */
const USER_LINES = 10;

/** Rows `text` takes at `width` columns (wrapped lines counted; wide characters as one column each). */
function rowsOf(text: string, width: number): number {
  if (text === "") return 0;
  return text.split("\n").reduce((n, line) => n + Math.max(1, Math.ceil(line.length / width)), 0);
}

function itemRows(item: NewItem, width: number): number {
  switch (item.kind) {
    case "user":
      return rowsOf(item.text, width) + 1;
    case "markdown":
      return rowsOf(item.source, width) + (item.gapBefore ? 1 : 0);
    case "tool":
      return 1 + rowsOf(item.tool.summary ?? "", width);
    default:
      return 2;
  }
}

const rows = (items: readonly NewItem[], width: number) => items.reduce((n, item) => n + itemRows(item, width), 0);

function userText(turn: EarlierTurn): string {
  const lines = turn.user.trimEnd().split("\n");
  const words = lines.length > USER_LINES ? `${lines.slice(0, USER_LINES).join("\n")}\n… ${lines.length - USER_LINES} more line(s)` : lines.join("\n");
  return turn.added === undefined || turn.added.length === 0 ? words : `${words}\n(+ ${turn.added.join(", ")})`;
}

/** The transcript keeps what later prompts carried (a file read is its content): its first line is shown. */
function shortSummary(summary: string): string {
  const all = summary.split("\n").filter((line) => line.trim() !== "");
  const cut = oneLine(all[0] ?? "", 160);
  return all.length > 1 ? `${cut} (+${all.length - 1} more line${all.length === 2 ? "" : "s"})` : cut;
}

function turnItems(turn: EarlierTurn): NewItem[] {
  const items: NewItem[] = [{ kind: "user", text: userText(turn) }];
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

/**
 * A turn taller than `room` rows alone: its message, then the tail of its last answer that fits,
 * with a line saying what was left out. Undefined when it has no answer text to cut.
 */
function tallTurn(items: readonly NewItem[], room: number, width: number): NewItem[] | undefined {
  const [user] = items;
  const lastText = items.findLastIndex((item) => item.kind === "markdown");
  const answer = items[lastText];
  if (user === undefined || answer?.kind !== "markdown") return undefined;
  const after = items.slice(lastText + 1);
  const left = Math.max(1, room - rows([user, ...after], width) - 2);
  // Rows at this width become source lines: a wrapped line counts for its rows.
  const source = answer.source.split("\n");
  let kept = 0;
  let used = 0;
  for (let i = source.length - 1; i >= 0; i--) {
    const lineRows = Math.max(1, Math.ceil((source[i] ?? "").length / width));
    if (used + lineRows > left) break;
    used += lineRows;
    kept += 1;
  }
  const tail = markdownTail(answer.source, Math.max(1, kept));
  const dropped = lastText - 1;
  const what = [tail.cut > 0 ? `${tail.cut} line(s) of the answer` : "", dropped > 0 ? `${dropped} earlier item(s) of the turn` : ""].filter((part) => part !== "").join(" and ");
  return [user, { kind: "notice", tone: "info", text: `${what} not printed again` }, { ...answer, source: tail.source, gapBefore: true }, ...after];
}

export function earlierItems(conversation: EarlierConversation, sessionId: string, width = 80, maxLines = MAX_EARLIER_LINES): NewItem[] {
  if (conversation.turns.length === 0) return [];
  const columns = Math.max(20, width);
  const groups: NewItem[][] = [];
  let used = 0;
  for (let i = conversation.turns.length - 1; i >= 0; i--) {
    const turn = conversation.turns[i];
    if (turn === undefined) continue;
    const items = turnItems(turn);
    const own = rows(items, columns);
    if (groups.length > 0 && used + own > maxLines) break;
    if (groups.length === 0 && own > maxLines) {
      // The newest turn alone is taller than the limit (a 20,000-line answer): its tail.
      groups.unshift(tallTurn(items, maxLines, columns) ?? items);
      break;
    }
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
