/**
 * Folding is a step of its own, run by the session, never inside the prompt builder: when a build
 * is over budget, `planRequest` returns "fold these turns" as data; this runs that fold (the
 * summarizer's own request and manifest — a model call for the agent's ModelSummarizer), then
 * plans again with the fold at hand, until the request can be built (issue 11). The settle step
 * after a turn (`settleWindow`: fold by cost, snapshot, working set), the offline fold after
 * `context_length_exceeded` and `/compact` live here too.
 */
import { describeError } from "../errors.ts";
import type { FoldDecision } from "../memory/fold-economics.ts";
import type { ShortTermMemory } from "../memory/short-term.ts";
import { ExtractiveSummarizer, foldTurns, type RollingSummary, type Summarizer } from "../memory/summary.ts";
import type { Turn } from "../memory/turn.ts";
import type { NewRecord } from "../session/transcript-schema.ts";
import type { FoldPlanner } from "./fold-planner.ts";
import type { AgentEvent } from "./events.ts";
import { takeStateSnapshot } from "../memory/state-snapshot.ts";
import type { SessionTranscript } from "../session/transcript.ts";
import type { StateStore } from "../state/store.ts";
import { planRequest, type BlockFold, type BuildInput, type BuiltRequest, type FoldPlan } from "../prompt/builder.ts";

/**
 * The fold a budget plan asks for. A summarizer that fails (not an abort) folds with the offline
 * one instead, and says why in the manifest's step detail: a fold never fails a turn.
 */
export async function foldForBudget(plan: FoldPlan, summarizer: Summarizer, signal?: AbortSignal): Promise<BlockFold> {
  try {
    const summary = await foldTurns(plan.previous, plan.turns, summarizer, signal);
    return { summary, summarizer: summarizer.name, note: "" };
  } catch (error) {
    if (signal?.aborted) throw error;
    const fallback = new ExtractiveSummarizer();
    const summary = await foldTurns(plan.previous, plan.turns, fallback);
    return { summary, summarizer: fallback.name, note: `; ${summarizer.name} failed: ${describeError(error)}` };
  }
}

/**
 * Plans the request; each fold the plan asks for runs as its own step (`afterFold` lets the
 * caller tell that step's notices) before planning again. The same inputs always reach the same
 * blocks in the same order, so each fold is made once and the final manifest records every one.
 */
export async function buildWithFolds(
  input: BuildInput,
  summarizer: Summarizer,
  signal: AbortSignal,
  afterFold: () => void,
): Promise<BuiltRequest> {
  const folds: BlockFold[] = [];
  for (;;) {
    const plan = await planRequest({ ...input, folds });
    if (plan.kind === "request") return plan.built;
    const through = plan.turns.at(-1)?.turn;
    if (folds.some((fold) => fold.summary.throughTurn === through)) throw new Error(`the build asked twice for the fold through turn ${through} (internal error)`);
    folds.push(await foldForBudget(plan, summarizer, signal));
    afterFold();
  }
}

/**
 * The settle step's fold: the window's oldest turns fold when `planner` says it pays (or the window
 * is full). After an abort the model is not asked again; a fold that fails (not an abort) folds the
 * same turns offline and says why in `notices`: a fold never fails a turn (issue 10). Returns the
 * summary record to persist, or undefined when nothing folded.
 */
export async function foldWindowIfDue(
  memory: ShortTermMemory,
  summarizer: Summarizer,
  planner: FoldPlanner,
  signal: AbortSignal,
  notices: string[],
): Promise<NewRecord | undefined> {
  // Decided once: the offline retry folds the same turns.
  let decided: FoldDecision | undefined;
  const decide = (turns: readonly Turn[], summary: RollingSummary | undefined): FoldDecision => (decided ??= planner.decide(turns, summary, memory.lastTurn));
  try {
    return await memory.slide(signal.aborted ? new ExtractiveSummarizer() : summarizer, signal.aborted ? undefined : signal, decide);
  } catch (error) {
    if (signal.aborted) throw error;
    notices.push(`folding the window failed (${describeError(error)}); folded with the offline summarizer instead`);
    return memory.slide(new ExtractiveSummarizer(), undefined, decide);
  }
}

/** What the settle step works on (AgentSession's). */
export interface SettleContext {
  memory: ShortTermMemory;
  state: StateStore;
  summarizer: Summarizer;
  folds: FoldPlanner;
  count: (text: string) => number;
  /** Notices the fold leaves for the next flush. */
  notices: string[];
}

/**
 * The step after a turn: the window folds when `foldWindowIfDue` says so (`window_slid`), a state
 * snapshot is taken at a fold, and the working set is recorded. Returns whether the window folded
 * (not when `signal` cancelled the fold: a notice says so).
 */
export async function settleWindow(ctx: SettleContext, transcript: SessionTranscript, signal: AbortSignal, emit: (event: AgentEvent) => void): Promise<boolean> {
  const turn = ctx.memory.lastTurn;
  const before = ctx.memory.window.size;
  const fold = await foldWindowIfDue(ctx.memory, ctx.summarizer, ctx.folds, signal, ctx.notices).catch((error: unknown) => {
    if (!signal.aborted) throw error;
    return "cancelled" as const;
  });
  if (fold === "cancelled") {
    // Ctrl-C: nothing folded, no failure to tell; the settle after the next turn decides again.
    ctx.notices.push("folding the window was cancelled: nothing was folded; it is decided again after the next answer");
    return false;
  }
  const folded = fold?.kind === "summary";
  if (folded) {
    transcript.append(fold);
    emit({ type: "window_slid", foldedTurns: before - ctx.memory.window.size, summaryTokens: fold.tokens ?? ctx.count(fold.text) });
    // The cached part of the next request breaks here anyway (the summary changed), so the state
    // snapshot it shows can catch up for free (ADR 0063, ADR 0074); between folds, state changes
    // travel after the user's message.
    await takeStateSnapshot(ctx.state, ctx.memory, transcript, turn);
  }
  const ws = ctx.memory.workingSetRecord(turn);
  if (ws) transcript.append(ws);
  transcript.sync();
  return folded;
}

/** After `context_length_exceeded`: the oldest window block folds offline; its records, or undefined if the window is empty. */
export async function foldOldestBlockOffline(memory: ShortTermMemory, turn: number): Promise<NewRecord[] | undefined> {
  const block = memory.window.oldestBlock();
  const last = block.at(-1);
  if (!last) return undefined;
  const summary = await foldTurns(memory.summary, block, new ExtractiveSummarizer());
  return memory.apply({ fold: { summary, throughTurn: last.turn, summarizer: "extractive" } }, turn);
}

/** `/compact`: the whole window folds into the summary now, recorded. Returns how many turns folded. */
export async function compactWindow(memory: ShortTermMemory, summarizer: Summarizer, transcript: SessionTranscript, signal?: AbortSignal): Promise<number> {
  const turns = [...memory.window.turns];
  const last = turns.at(-1);
  if (!last) return 0;
  const summary = await foldTurns(memory.summary, turns, summarizer, signal);
  transcript.append(memory.apply({ fold: { summary, throughTurn: last.turn, summarizer: summarizer.name } }, last.turn));
  transcript.sync();
  return turns.length;
}
