/**
 * The cutoff policy (MAX_CONTEXT_TOKENS). When a request is over budget, in this order:
 *   1. trim_state: the state projection, already TOON within its 750-token cap, is trimmed to
 *      its 250-token floor (most relevant items kept: blockers, active tasks, latest decisions);
 *   2. fold_window: the oldest window block is folded into the rolling summary, block by block;
 *   3. evict_working_set: working-set items go by the overflow policy (SUMMARIZE condenses);
 *   4. shorten_tool_outputs: function outputs are cut head+tail, halving the cap each round.
 * Core rules, tools and the current task are never cut; if what remains still does not fit,
 * the build fails with a `BudgetExceededError` that names the largest pieces.
 * Every step works on a copy of the context and is recorded: the manifest lists the steps and
 * everything dropped, and `changes` tells the caller what to make permanent.
 */
import type { MemoryChanges } from "../memory/short-term.ts";
import { foldTurns, type Summarizer } from "../memory/summary.ts";
import { WorkingSet, type WorkingSetEvent } from "../memory/working-set.ts";
import { STATE_TOKEN_FLOOR } from "../state/projection.ts";
import { BudgetExceededError } from "./budget-error.ts";
import type { CutoffStep, DroppedItem } from "./manifest-schema.ts";
import type { Pass } from "./render-pass.ts";
import type { Count } from "./request-assembly.ts";
import type { SectionContext } from "./section.ts";

/** Function outputs are never cut below this many tokens. */
export const MIN_TOOL_OUTPUT_TOKENS = 64;

export interface CutoffInput {
  ctx: SectionContext;
  first: Pass;
  budget: number;
  rerender: (ctx: SectionContext) => Promise<Pass>;
  windowBlockTurns: number;
  summarizer: Summarizer;
  count: Count;
  signal?: AbortSignal;
}

export interface CutoffResult {
  ctx: SectionContext;
  pass: Pass;
  steps: CutoffStep[];
  dropped: DroppedItem[];
  changes: MemoryChanges;
  workingSetEvents: WorkingSetEvent[];
}

function tokensOf(pass: Pass, id: string): number {
  return pass.pieces.find((p) => p.id === id)?.tokens ?? 0;
}

function largest(pass: Pass): Array<{ id: string; tokens: number }> {
  return [...pass.pieces].sort((a, b) => b.tokens - a.tokens).slice(0, 5).map((p) => ({ id: p.id, tokens: p.tokens }));
}

/** Tokens nothing can remove: tools, required pieces except this turn's tool steps, framing. */
function floorTokens(pass: Pass): number {
  const fixed = pass.pieces.filter((p) => p.placement === "tools" || (p.required && p.type !== "task_step"));
  return fixed.reduce((n, p) => n + p.tokens, 0) + (pass.total - pass.itemTokens);
}

export async function applyCutoff(input: CutoffInput): Promise<CutoffResult> {
  const { budget, count, summarizer } = input;
  let ctx = input.ctx;
  let pass = input.first;
  const steps: CutoffStep[] = [];
  const dropped: DroppedItem[] = [];
  const changes: MemoryChanges = {};
  const workingSetEvents: WorkingSetEvent[] = [];
  const over = () => pass.total > budget;
  const record = (step: CutoffStep["step"], detail: string, before: number) =>
    steps.push({ step, detail, tokens_before: before, tokens_after: pass.total });

  const floor = floorTokens(pass);
  if (floor > budget) {
    throw new BudgetExceededError("the core rules, the tools and the current message", floor, budget, largest(pass));
  }

  // 1. State: down from its cap to its floor.
  if (over() && pass.pieces.some((p) => p.type === "working_state") && ctx.stateCap > STATE_TOKEN_FLOOR) {
    const before = pass.total;
    const cap = ctx.stateCap;
    ctx = { ...ctx, stateCap: STATE_TOKEN_FLOOR };
    pass = await input.rerender(ctx);
    record("trim_state", `state projection cap ${cap} → ${STATE_TOKEN_FLOOR} tokens`, before);
  }

  // 2. Window: fold the oldest block into the summary, one block at a time.
  while (over() && ctx.turns.length > 0) {
    const block = ctx.turns.slice(0, input.windowBlockTurns);
    const last = block.at(-1);
    const first = block[0];
    if (!last || !first) break;
    const before = pass.total;
    const summary = await foldTurns(ctx.summary, block, summarizer, input.signal);
    summary.tokens = count(summary.text);
    for (const turn of block) {
      dropped.push({ id: `turn:${turn.turn}`, tokens: tokensOf(pass, `turn:${turn.turn}`), reason: "folded_into_summary", detail: `folded into the rolling summary (${summarizer.name})` });
    }
    ctx = { ...ctx, turns: ctx.turns.slice(block.length), summary };
    changes.fold = { summary, throughTurn: last.turn, summarizer: summarizer.name };
    pass = await input.rerender(ctx);
    record("fold_window", `turns ${first.turn}–${last.turn} folded into the summary (${summarizer.name})`, before);
  }

  // 3. Working set: evict by policy until the request fits.
  if (over() && ctx.workingSet.length > 0) {
    const before = pass.total;
    const ws = new WorkingSet({ budgetTokens: Number.MAX_SAFE_INTEGER, policy: ctx.overflowPolicy, countTokens: count });
    ws.restore(ctx.workingSet);
    ws.setTurn(ctx.turn);
    ws.setAttention(ctx.attention);
    const tokensBefore = new Map(pass.pieces.map((p) => [p.id, p.tokens]));
    while (over() && ws.items().length > 0) {
      const size = ws.items().length;
      ws.setBudget(Math.max(0, ws.used() - (pass.total - budget)));
      if (ws.items().length === size && ws.used() > 0 && !ws.evictOne()) break;
      ctx = { ...ctx, workingSet: ws.snapshot() };
      pass = await input.rerender(ctx);
    }
    const events = ws.drainEvents();
    workingSetEvents.push(...events);
    for (const event of events) {
      if (event.type === "evicted") {
        dropped.push({ id: `ws:${event.id}`, tokens: tokensBefore.get(`ws:${event.id}`) ?? event.tokens, reason: "evicted", detail: `working set, policy ${event.policy} (priority ${event.priority.toFixed(2)}, effective ${event.effective.toFixed(2)})` });
      } else if (event.type === "summarized") {
        for (const id of event.from) {
          dropped.push({ id: `ws:${id}`, tokens: tokensBefore.get(`ws:${id}`) ?? 0, reason: "condensed", detail: `condensed into ws:${event.id} (summarize policy)` });
        }
      }
    }
    changes.workingSet = { items: ws.snapshot(), events };
    record("evict_working_set", `${events.filter((e) => e.type === "evicted").length} evicted, ${events.filter((e) => e.type === "summarized").length} condensed (policy ${ctx.overflowPolicy})`, before);
  }

  // 4. Tool outputs: head+tail, halving the cap each round.
  if (over()) {
    const before = pass.total;
    const tokensBefore = new Map(pass.pieces.map((p) => [p.id, p.tokens]));
    let cap = ctx.toolOutputTokens;
    while (over() && cap > MIN_TOOL_OUTPUT_TOKENS) {
      cap = Math.max(MIN_TOOL_OUTPUT_TOKENS, Math.floor(cap / 2));
      ctx = { ...ctx, toolOutputTokens: cap };
      pass = await input.rerender(ctx);
    }
    const shortened = pass.pieces.filter((p) => (p.type === "turn" || p.type === "task_step") && p.tokens < (tokensBefore.get(p.id) ?? 0));
    for (const piece of shortened) {
      dropped.push({ id: piece.id, tokens: (tokensBefore.get(piece.id) ?? 0) - piece.tokens, reason: "shortened_head_tail", detail: `function outputs cut head+tail to ≤${cap} tokens` });
    }
    if (shortened.length > 0) record("shorten_tool_outputs", `${shortened.length} pieces' function outputs cut head+tail to ≤${cap} tokens`, before);
  }

  if (over()) {
    throw new BudgetExceededError("after every cutoff step, the remaining prompt pieces", pass.total, budget, largest(pass));
  }
  return { ctx, pass, steps, dropped, changes, workingSetEvents };
}
