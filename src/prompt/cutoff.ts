/**
 * The cutoff policy (MAX_CONTEXT_TOKENS). When a request is over budget, in this order:
 *   1. trim_state: the state projection, already TOON within its 750-token cap, is trimmed to
 *      its 250-token floor (most relevant items kept: blockers, active tasks, latest decisions);
 *   2. fold_window: the oldest window block (`budgetFoldTurns`: at least 3 turns) is folded into
 *      the rolling summary, block by block, with a summary made before the build (the session's
 *      fold step, a model call) or, for offline callers, by the extractive summarizer; a block
 *      with neither ends the cutoff with a fold plan (data: "fold these turns first"). The cutoff
 *      itself never calls a model;
 *   3. evict_working_set: working-set items go by the overflow policy (SUMMARIZE condenses);
 *   4. shorten_tool_outputs: function outputs are cut head+tail, halving the cap each round;
 *   then the last resort (cutoff-last-resort.ts): the volatile context, the summary, the state and
 *   finally the user's own message, head+tail. Summary requests first cut long texts inside the
 *   turns being folded (shorten_evicted_turns).
 * Core rules, tools and instruction files are never cut; if they, framing and the smallest cut of
 * the message do not fit, the build fails with a `BudgetExceededError` that names the largest pieces.
 * Every step works on a copy of the context and is recorded: the manifest lists the steps and
 * everything dropped, and `changes` tells the caller what to make permanent.
 */
import type { MemoryChanges } from "../memory/short-term.ts";
import type { RollingSummary } from "../memory/summary.ts";
import type { Turn } from "../memory/turn.ts";
import { budgetFoldTurns } from "../memory/window.ts";
import { WorkingSet, type WorkingSetEvent } from "../memory/working-set.ts";
import { STATE_TOKEN_FLOOR } from "../state/projection.ts";
import { BudgetExceededError, budgetShares, type BudgetShare } from "./budget-error.ts";
import { applyLastResort, MIN_CUT_TOKENS, over, shortenEvictedTurns, tokensOf, type CutoffRun } from "./cutoff-last-resort.ts";
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
  /** The fold of `block` into `previous`, if one is at hand; undefined ends the cutoff with a fold plan. */
  foldBlock: (previous: RollingSummary | undefined, block: readonly Turn[]) => Promise<BlockFold | undefined>;
  count: Count;
}

/** A window block folded into the summary, before the build (the session's fold step) or offline. */
export interface BlockFold {
  summary: RollingSummary;
  /** The summarizer that made it ("model", "extractive"). */
  summarizer: string;
  /** Why a fallback folded it, for the manifest's step detail ("" when none did). */
  note: string;
}

/** Over budget with no fold at hand: `turns` must be folded into `previous` before the build can finish. */
export interface FoldPlan {
  kind: "fold";
  previous: RollingSummary | undefined;
  turns: readonly Turn[];
}

export interface CutoffResult {
  kind: "cut";
  ctx: SectionContext;
  pass: Pass;
  steps: CutoffStep[];
  dropped: DroppedItem[];
  changes: MemoryChanges;
  workingSetEvents: WorkingSetEvent[];
}

function largest(pass: Pass): BudgetShare[] {
  return budgetShares(pass.pieces).slice(0, 5);
}

/** Required pieces the cutoff may still shorten head+tail (never below MIN_CUT_TOKENS). */
const CUTTABLE_REQUIRED = new Set(["task:message", "evicted_turns"]);

/**
 * Tokens nothing can remove: tools, required pieces (the user's message and the turns being
 * folded at their smallest cut; not this turn's tool steps), framing.
 */
function floorTokens(pass: Pass): number {
  const fixed = pass.pieces.filter((p) => p.placement === "tools" || (p.required && p.type !== "task_step"));
  // The message's text parts (its words, its attachments) are cut as one; its images are not.
  const cuttable = (p: Pass["pieces"][number]) => CUTTABLE_REQUIRED.has(p.id) || (p.region === "task" && !p.images);
  const tokens = fixed.reduce((n, p) => n + (cuttable(p) ? Math.min(p.tokens, MIN_CUT_TOKENS * 2) : p.tokens), 0);
  return tokens + (pass.total - pass.itemTokens);
}

/**
 * Step 1 runs before it is known what folding frees; once the request fits, the state gets back as
 * much of its cap as the headroom allows (its facts outrank the turns that were folded).
 */
async function restoreState(run: CutoffRun, cap: number): Promise<void> {
  if (over(run) || run.ctx.stateCap >= cap || !run.ctx.state) return;
  const trimmed = run.ctx.stateCap;
  const stateTokens = tokensOf(run.pass, "working_state") + tokensOf(run.pass, "working_state_changes");
  const headroom = run.budget - run.pass.total;
  const candidate = Math.min(cap, trimmed + headroom);
  if (candidate <= trimmed) return;
  const before = run.pass.total;
  const ctx = { ...run.ctx, stateCap: candidate };
  const pass = await run.rerender(ctx);
  if (pass.total > run.budget || stateTokens === 0) return;
  run.ctx = ctx;
  run.pass = pass;
  run.steps.push({ step: "restore_state", detail: `state projection cap ${trimmed} → ${candidate} tokens: later steps left room`, tokens_before: before, tokens_after: pass.total });
}

export async function applyCutoff(input: CutoffInput): Promise<CutoffResult | FoldPlan> {
  const { budget, count } = input;
  const run: CutoffRun = { ctx: input.ctx, pass: input.first, budget, rerender: input.rerender, count, steps: [], dropped: [] };
  const { steps, dropped } = run;
  const changes: MemoryChanges = {};
  const workingSetEvents: WorkingSetEvent[] = [];
  const record = (step: CutoffStep["step"], detail: string, before: number) =>
    steps.push({ step, detail, tokens_before: before, tokens_after: run.pass.total });

  const floor = floorTokens(run.pass);
  if (floor > budget) {
    throw new BudgetExceededError("the core rules, the tools and the current message", floor, budget, largest(run.pass));
  }

  // 1. State: down from its cap to its floor.
  if (over(run) && run.pass.pieces.some((p) => p.type === "working_state") && run.ctx.stateCap > STATE_TOKEN_FLOOR) {
    const before = run.pass.total;
    const cap = run.ctx.stateCap;
    run.ctx = { ...run.ctx, stateCap: STATE_TOKEN_FLOOR };
    run.pass = await input.rerender(run.ctx);
    record("trim_state", `state projection cap ${cap} → ${STATE_TOKEN_FLOOR} tokens`, before);
  }

  // Summary requests: a giant paste among the turns being folded is cut before anything else.
  await shortenEvictedTurns(run);

  // 2. Window: fold the oldest block into the summary, one block at a time.
  while (over(run) && run.ctx.turns.length > 0) {
    const block = run.ctx.turns.slice(0, budgetFoldTurns(input.windowBlockTurns));
    const last = block.at(-1);
    const first = block[0];
    if (!last || !first) break;
    const before = run.pass.total;
    const folded = await input.foldBlock(run.ctx.summary, block);
    if (!folded) return { kind: "fold", previous: run.ctx.summary, turns: block };
    const { summarizer: name, note } = folded;
    const summary = { ...folded.summary, tokens: count(folded.summary.text) };
    for (const turn of block) {
      dropped.push({ id: `turn:${turn.turn}`, tokens: tokensOf(run.pass, `turn:${turn.turn}`), reason: "folded_into_summary", detail: `folded into the rolling summary (${name})` });
    }
    // A folded turn may have shown state changes a later turn's changes count from: the next ones count from the snapshot again.
    run.ctx = { ...run.ctx, turns: run.ctx.turns.slice(block.length), summary, stateSeen: undefined };
    changes.fold = { summary, throughTurn: last.turn, summarizer: name };
    run.pass = await input.rerender(run.ctx);
    record("fold_window", `turns ${first.turn}–${last.turn} folded into the summary (${name}${note})`, before);
  }

  // 3. Working set: evict by policy until the request fits.
  if (over(run) && run.ctx.workingSet.length > 0) {
    const before = run.pass.total;
    const ws = new WorkingSet({ budgetTokens: Number.MAX_SAFE_INTEGER, policy: run.ctx.overflowPolicy, countTokens: count });
    ws.restore(run.ctx.workingSet);
    ws.setTurn(run.ctx.turn);
    ws.setAttention(run.ctx.attention);
    const tokensBefore = new Map(run.pass.pieces.map((p) => [p.id, p.tokens]));
    while (over(run) && ws.items().length > 0) {
      const size = ws.items().length;
      ws.setBudget(Math.max(0, ws.used() - (run.pass.total - budget)));
      if (ws.items().length === size && ws.used() > 0 && !ws.evictOne()) break;
      run.ctx = { ...run.ctx, workingSet: ws.snapshot() };
      run.pass = await input.rerender(run.ctx);
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
    record("evict_working_set", `${events.filter((e) => e.type === "evicted").length} evicted, ${events.filter((e) => e.type === "summarized").length} condensed (policy ${run.ctx.overflowPolicy})`, before);
  }

  // 4. Tool outputs: head+tail, halving the cap each round.
  if (over(run)) {
    const before = run.pass.total;
    const tokensBefore = new Map(run.pass.pieces.map((p) => [p.id, p.tokens]));
    let cap = run.ctx.toolOutputTokens;
    while (over(run) && cap > MIN_TOOL_OUTPUT_TOKENS) {
      cap = Math.max(MIN_TOOL_OUTPUT_TOKENS, Math.floor(cap / 2));
      run.ctx = { ...run.ctx, toolOutputTokens: cap };
      run.pass = await input.rerender(run.ctx);
    }
    const shortened = run.pass.pieces.filter((p) => (p.type === "turn" || p.type === "task_step") && p.tokens < (tokensBefore.get(p.id) ?? 0));
    for (const piece of shortened) {
      dropped.push({ id: piece.id, tokens: (tokensBefore.get(piece.id) ?? 0) - piece.tokens, reason: "shortened_head_tail", detail: `function outputs cut head+tail to ≤${cap} tokens` });
    }
    if (shortened.length > 0) record("shorten_tool_outputs", `${shortened.length} pieces' function outputs cut head+tail to ≤${cap} tokens`, before);
  }

  // The volatile context, the summary, the state and finally the message itself, in this request only.
  await applyLastResort(run);

  await restoreState(run, input.ctx.stateCap);

  if (over(run)) {
    throw new BudgetExceededError("after every cutoff step, the remaining prompt pieces", run.pass.total, budget, largest(run.pass));
  }
  return { kind: "cut", ctx: run.ctx, pass: run.pass, steps, dropped, changes, workingSetEvents };
}
