/**
 * The fake model of the agent benchmark: answers each turn request from the script in
 * bench-conversation.ts (the next step's tool calls, then the answer), and summary requests with
 * a summary made only from what the request contains.
 */
import { lastUserText, toolOutputsThisTurn, type FakeToolCall } from "../../support/fake-responses-server.ts";
import { BENCH_TURNS } from "./bench-conversation.ts";
import { fakeFoldSummary, isFoldRequest } from "./cost-model.ts";
import { answerText } from "./bench-prose.ts";

/** A fold request: the separate summary request, or one riding the turn request's cache (cost-model.ts). */
export const isSummaryRequest = isFoldRequest;

/**
 * The fake model's summary: the previous summary plus one line per folded turn (the user's words
 * and the start of the answer), taken from the summary request alone — it knows nothing else.
 */
export function fakeSummary(body: Record<string, unknown>): string {
  if (!String(body.instructions ?? "").includes("You maintain the rolling summary")) return fakeFoldSummary(body);
  const text = JSON.stringify(body.input ?? []).replaceAll("\\n", "\n");
  const previous = /<conversation_summary[^>]*>\n([\s\S]*?)<\/conversation_summary>/.exec(text)?.[1]?.trim() ?? "";
  const folded = /<turns_to_fold[^>]*>\n([\s\S]*?)<\/turns_to_fold>/.exec(text)?.[1] ?? "";
  const lines = folded.split("\n").flatMap((line) => {
    const user = /^\[turn (\d+)\] user: (.*)$/.exec(line);
    if (user) return [`- turn ${user[1]}: the user said: ${(user[2] ?? "").slice(0, 160)}`];
    if (line.startsWith("assistant: ")) return [`  answer: ${line.slice(11, 131)}`];
    return [];
  });
  return [previous, ...lines].filter((l) => l !== "").join("\n");
}

/** What the fake model does for a turn request: the next scripted step's tool calls, or the answer. */
export function scriptedReply(body: Record<string, unknown>): { text?: string; calls?: FakeToolCall[] } | undefined {
  const turnIndex = BENCH_TURNS.findIndex((t) => t.user === lastUserText(body));
  const turn = BENCH_TURNS[turnIndex];
  if (!turn) return undefined;
  const done = toolOutputsThisTurn(body).length;
  let seen = 0;
  for (const step of turn.steps) {
    if (seen === done) return { calls: step.calls, ...(step.text ? { text: step.text } : {}) };
    seen += step.calls.length;
  }
  return { text: answerText(turnIndex + 1, turn.answer) };
}
