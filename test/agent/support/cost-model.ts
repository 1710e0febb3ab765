/**
 * The fake model of the memory-cost benchmark: answers a turn request from a script (matched by
 * the user's message), and a fold request with a summary made only from what the request holds —
 * the previous summary plus a line per folded turn, keeping the sentences where the user stated
 * a fact whole, and, once the summary would pass ~1,500 tokens, rewriting it to about half that
 * (the oldest plain lines merged into one count line), as the summary rules ask a real model to.
 */
import { inputItems, isDataMessage, type InputItemView } from "../../support/request-view.ts";
import type { FakeToolCall } from "../../support/fake-responses-server.ts";

/** A fold request: the old separate summary request, or a cache-riding one ending in `<fold_request`. */
export function isFoldRequest(body: Record<string, unknown>): boolean {
  if (String(body.instructions ?? "").includes("You maintain the rolling summary")) return true;
  const last = inputItems(body).at(-1);
  return last?.type === "message" && last.role === "user" && (last.content ?? "").startsWith("<fold_request");
}

/** The user's own messages of the request (not valarmind's data messages), in order. */
export function userMessages(body: Record<string, unknown>): InputItemView[] {
  return inputItems(body).filter((item) => item.type === "message" && item.role === "user" && !isDataMessage(item));
}

const FACT_WORDS = /\b(remember|decided|decision|convention|task|goal|change of plan|reverse|finished|mark it done)\b/i;
const MAX_SUMMARY_CHARS = 6000;
const REWRITE_SUMMARY_CHARS = 3000;

function between(text: string, open: RegExp, close: string): string {
  const match = open.exec(text);
  if (!match) return "";
  const start = match.index + match[0].length;
  const end = text.indexOf(close, start);
  return end < 0 ? "" : text.slice(start, end).trim();
}

function unescape(text: string): string {
  return text.replaceAll("&lt;", "<").replaceAll("&gt;", ">").replaceAll("&amp;", "&");
}

function line(turn: string, user: string, answer: string): string {
  const flat = user.replace(/\s+/g, " ").trim();
  const said = FACT_WORDS.test(flat) ? (flat.split(/(?<=[.!?])\s/)[0] ?? flat) : flat.slice(0, 90);
  return `- turn ${turn}: ${said}${answer ? ` → ${answer.replace(/\s+/g, " ").slice(0, 70)}` : ""}`;
}

/** The folded turns as (turn, user, answer) from either request shape. */
function foldedTurns(body: Record<string, unknown>): Array<{ turn: string; user: string; answer: string }> {
  const items = inputItems(body);
  const last = items.at(-1)?.content ?? "";
  if (last.startsWith("<fold_request")) {
    const count = Number(/count="(\d+)"/.exec(last)?.[1] ?? 0);
    const first = Number(/turns="(\d+)/.exec(last)?.[1] ?? 1);
    const out: Array<{ turn: string; user: string; answer: string }> = [];
    // The window's turns: each starts at a user message of the user's own; answers follow.
    for (const item of items) {
      if (item.type === "message" && item.role === "user" && !isDataMessage(item)) {
        if (out.length === count) break;
        out.push({ turn: String(first + out.length), user: item.content ?? "", answer: "" });
      } else if (item.type === "message" && item.role === "assistant" && out.length > 0) {
        const turn = out.at(-1);
        if (turn) turn.answer = item.content ?? "";
      }
    }
    return out;
  }
  const text = unescape(JSON.stringify(body.input ?? []).replaceAll("\\n", "\n"));
  const folded = between(text, /<turns_to_fold[^>]*>\n/, "</turns_to_fold>");
  const out: Array<{ turn: string; user: string; answer: string }> = [];
  for (const row of folded.split("\n")) {
    const user = /^\[turn (\d+)\] user: (.*)$/.exec(row);
    if (user) out.push({ turn: user[1] ?? "?", user: user[2] ?? "", answer: "" });
    else if (row.startsWith("assistant: ") && out.length > 0) {
      const turn = out.at(-1);
      if (turn) turn.answer = row.slice(11);
    }
  }
  return out;
}

export function fakeFoldSummary(body: Record<string, unknown>): string {
  const text = unescape(inputItems(body).map((item) => item.content ?? "").join("\n"));
  // The block ends with its turn range, "(turns 1–16)": not a line of the summary.
  const previous = between(text, /<conversation_summary[^>]*>\n/, "</conversation_summary>").replace(/\n?\(turns \d+–\d+\)$/, "");
  const lines = [...previous.split("\n").filter((l) => l.trim() !== ""), ...foldedTurns(body).map((t) => line(t.turn, t.user, t.answer))];
  // Over the cap: plain lines (no stated fact) are dropped oldest first into one count line, down to half the cap.
  let dropped = 0;
  const size = () => lines.reduce((n, l) => n + l.length + 1, 0);
  const target = size() > MAX_SUMMARY_CHARS ? REWRITE_SUMMARY_CHARS : MAX_SUMMARY_CHARS;
  for (let i = 0; size() > target && i < lines.length; ) {
    const l = lines[i] ?? "";
    if (l.startsWith("- turn") && !FACT_WORDS.test(l)) {
      lines.splice(i, 1);
      dropped++;
    } else i++;
  }
  if (dropped > 0) {
    const earlier = /^\((\d+) earlier turns of discussion\)$/.exec(lines[0] ?? "");
    if (earlier) lines[0] = `(${Number(earlier[1]) + dropped} earlier turns of discussion)`;
    else lines.unshift(`(${dropped} earlier turns of discussion)`);
  }
  return lines.join("\n");
}

export interface ScriptedTurnReply {
  user: string;
  /** Tool calls before the answer, one request per step. */
  steps?: FakeToolCall[][];
  answer: string;
}

/**
 * The reply to a turn request: the turn is the one whose script message starts the last of the
 * user's own messages; its memory calls first (once), then its answer.
 */
export function scriptedTurnReply(body: Record<string, unknown>, byStart: Map<string, ScriptedTurnReply>): { calls?: FakeToolCall[]; text?: string } | undefined {
  const items = inputItems(body);
  const lastUser = items.findLastIndex((item) => item.type === "message" && item.role === "user" && !isDataMessage(item));
  const message = items[lastUser]?.content ?? "";
  const turn = byStart.get(message.slice(0, 80));
  if (!turn) return undefined;
  const outputs = items.slice(lastUser + 1).filter((item) => item.type === "function_call_output").length;
  let seen = 0;
  for (const calls of turn.steps ?? []) {
    if (seen === outputs) return { calls };
    seen += calls.length;
  }
  return { text: turn.answer };
}
