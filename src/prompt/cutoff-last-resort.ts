/**
 * The cutoff's last steps, for budgets so small that folding the window, evicting the working set
 * and shortening tool outputs are not enough (issue 10: a 2.5k-token paste under a 4.5k budget).
 * They cut what the ordinary steps never touch, least useful first, in this request only (the
 * transcript, the summary record and state.json keep everything):
 *   trim_context     — the volatile context down to the time (git status and touched files go);
 *   shorten_summary  — the rolling summary head+tail, to nothing if need be;
 *   drop_state       — the working state and its changes;
 *   shorten_message  — the user's message head+tail, with a note saying so (a message that alone
 *                      is over what remains; the turn is answered instead of failed).
 * Summary requests have one more, run before these: shorten_evicted_turns, which cuts long texts
 * inside the turns being folded head+tail (a giant paste) so the fold's request fits.
 */
import type { Turn, TurnItem } from "../memory/turn.ts";
import type { CutoffStep, DroppedItem } from "./manifest-schema.ts";
import { promptText } from "./prompt-text.ts";
import type { Pass } from "./render-pass.ts";
import type { Count } from "./request-assembly.ts";
import type { SectionContext } from "./section.ts";
import { shortenHeadTail } from "./shorten.ts";

/** Texts are never cut below this many tokens; below it a summary is left out instead. */
export const MIN_CUT_TOKENS = 64;
/** Where halving long texts in folded turns starts. */
const EVICTED_TEXT_START_TOKENS = 1024;

/** The cutoff's working copy: each step replaces `ctx` and `pass` and records what it did. */
export interface CutoffRun {
  ctx: SectionContext;
  pass: Pass;
  readonly budget: number;
  readonly rerender: (ctx: SectionContext) => Promise<Pass>;
  readonly count: Count;
  readonly steps: CutoffStep[];
  readonly dropped: DroppedItem[];
}

export function over(run: CutoffRun): boolean {
  return run.pass.total > run.budget;
}

export function tokensOf(pass: Pass, id: string): number {
  return pass.pieces.find((p) => p.id === id)?.tokens ?? 0;
}

/** The user's message as text: its words and its attachments (ADR 0079), images aside. */
function messageTokens(pass: Pass): number {
  return pass.pieces.filter((p) => p.region === "task" && !p.images).reduce((n, p) => n + p.tokens, 0);
}

async function step(run: CutoffRun, name: CutoffStep["step"], ctx: SectionContext, detail: () => string): Promise<void> {
  const before = run.pass.total;
  run.ctx = ctx;
  run.pass = await run.rerender(ctx);
  run.steps.push({ step: name, detail: detail(), tokens_before: before, tokens_after: run.pass.total });
}

/** A cap for `tokens` that would bring the request within budget, not below MIN_CUT_TOKENS. */
function capFor(run: CutoffRun, tokens: number): number {
  return Math.max(MIN_CUT_TOKENS, tokens - (run.pass.total - run.budget) - 8);
}

function cutItem(item: TurnItem, cap: number, count: Count): TurnItem {
  if (item.kind === "assistant") return { ...item, text: shortenHeadTail(item.text, cap, count).text };
  return { ...item, output: shortenHeadTail(item.output, cap, count).text };
}

/** The folded turns with every text over `cap` tokens cut head+tail (user message, answers, tool output). */
export function cutTurnTexts(turns: readonly Turn[], cap: number, count: Count): Turn[] {
  return turns.map((turn) => ({ ...turn, user: shortenHeadTail(turn.user, cap, count).text, items: turn.items.map((item) => cutItem(item, cap, count)) }));
}

/** Summary requests: long texts in the turns being folded, head+tail, halving the cap until the request fits. */
export async function shortenEvictedTurns(run: CutoffRun): Promise<void> {
  if (!over(run) || run.ctx.evictedTurns.length === 0) return;
  const original = run.ctx.evictedTurns;
  const before = run.pass.total;
  const tokensBefore = tokensOf(run.pass, "evicted_turns");
  let cap = EVICTED_TEXT_START_TOKENS * 2;
  while (over(run) && cap > MIN_CUT_TOKENS) {
    cap = Math.max(MIN_CUT_TOKENS, Math.floor(cap / 2));
    run.ctx = { ...run.ctx, evictedTurns: cutTurnTexts(original, cap, run.count) };
    run.pass = await run.rerender(run.ctx);
  }
  const cut = run.ctx.evictedTurns.filter((turn, i) => JSON.stringify(turn) !== JSON.stringify(original[i]));
  for (const turn of cut) {
    run.dropped.push({ id: `turn:${turn.turn}`, tokens: 0, reason: "shortened_head_tail", detail: `texts of folded turn ${turn.turn} cut head+tail to ≤${cap} tokens for the summary request (the transcript keeps them whole)` });
  }
  const saved = Math.max(0, tokensBefore - tokensOf(run.pass, "evicted_turns"));
  run.steps.push({ step: "shorten_evicted_turns", detail: `${cut.length} folded turns' long texts cut head+tail to ≤${cap} tokens (${saved} tokens saved)`, tokens_before: before, tokens_after: run.pass.total });
}

/** The steps after the ordinary four, in order, each only while the request is still over budget. */
export async function applyLastResort(run: CutoffRun): Promise<void> {
  const frozen = run.ctx.task?.context;
  if (over(run) && frozen && frozen.context !== "") {
    // A later step of the turn: its volatile context was taken at the first request; it goes whole.
    const before = tokensOf(run.pass, "volatile_context");
    await step(run, "trim_context", { ...run.ctx, task: { ...run.ctx.task!, context: { ...frozen, context: "" } } }, () => "volatile context (as taken at the turn's first request) left out");
    run.dropped.push({ id: "volatile_context", tokens: before, reason: "budget_last_resort", detail: "the turn's volatile context left out of this request" });
  } else if (over(run) && !frozen && (run.ctx.git || run.ctx.touchedFiles.length > 0 || run.ctx.touchedSymbols.length > 0)) {
    const before = tokensOf(run.pass, "volatile_context");
    await step(run, "trim_context", { ...run.ctx, git: undefined, touchedFiles: [], touchedSymbols: [] }, () => "volatile context cut to the time (git status, touched files and symbols left out)");
    run.dropped.push({ id: "volatile_context", tokens: Math.max(0, before - tokensOf(run.pass, "volatile_context")), reason: "budget_last_resort", detail: "git status and touched files left out of this request" });
  }

  const summary = run.ctx.summary;
  if (over(run) && summary && summary.text !== "") {
    const tokens = tokensOf(run.pass, "summary");
    // The cap is for the summary's text: the block's tags and turn range take the rest.
    const wrapping = Math.max(0, tokens - run.count(summary.text));
    const cut = async (cap: number): Promise<string> => {
      const text = cap >= MIN_CUT_TOKENS && cap < tokens - wrapping ? shortenHeadTail(summary.text, cap, run.count).text : "";
      await step(run, "shorten_summary", { ...run.ctx, summary: { ...summary, text } }, () => (text === "" ? "rolling summary left out" : `rolling summary cut head+tail to ≤${cap} tokens`));
      return text;
    };
    const cap = capFor(run, tokens) - wrapping;
    let text = await cut(cap);
    // The cut's own marker can tip it over by a few tokens: once more at half, before leaving it out.
    if (over(run) && text !== "") text = await cut(Math.floor(cap / 2));
    if (over(run) && text !== "") await step(run, "shorten_summary", { ...run.ctx, summary: { ...summary, text: "" } }, () => "rolling summary left out");
    run.dropped.push({ id: "summary", tokens: Math.max(0, tokens - tokensOf(run.pass, "summary")), reason: "budget_last_resort", detail: `rolling summary of turns ${summary.fromTurn}–${summary.throughTurn} ${run.ctx.summary?.text === "" ? "left out of" : "cut head+tail in"} this request (the transcript keeps it)` });
  }

  if (over(run) && (run.ctx.state || run.ctx.stateSnapshot || (run.ctx.task?.context?.stateChanges ?? "") !== "")) {
    const tokens = tokensOf(run.pass, "working_state") + tokensOf(run.pass, "working_state_changes");
    const task = run.ctx.task;
    const withoutChanges = task?.context ? { task: { ...task, context: { ...task.context, stateChanges: "" } } } : {};
    await step(run, "drop_state", { ...run.ctx, state: undefined, stateSnapshot: undefined, stateSeen: undefined, ...withoutChanges }, () => "working state left out of this request");
    run.dropped.push({ id: "working_state", tokens, reason: "budget_last_resort", detail: "working state left out of this request (.valarmind/memory/state.json keeps it)" });
  }

  const task = run.ctx.task;
  if (over(run) && task) {
    const tokens = messageTokens(run.pass);
    const note = promptText("message-cut-note");
    const cap = Math.max(MIN_CUT_TOKENS, capFor(run, tokens) - run.count(note) - 1);
    const cut = shortenHeadTail(task.userText, cap, run.count);
    if (cut.shortened) {
      const userText = `${cut.text}\n${note}`;
      await step(run, "shorten_message", { ...run.ctx, task: { ...task, userText } }, () => `the user's message cut head+tail to ≤${cap} tokens`);
      run.dropped.push({ id: "task:message", tokens: Math.max(0, tokens - messageTokens(run.pass)), reason: "shortened_head_tail", detail: "the user's message alone was over what the budget leaves; its middle was cut (the transcript keeps it whole)" });
    }
  }
}
