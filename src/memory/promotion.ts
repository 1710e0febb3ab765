/**
 * Promotion (seed 001: "when something is completed or stabilized, promote to medium-term"):
 * when the window folds, the summary request also sees the working state and is asked which
 * finished tasks, settled decisions and new tasks the folded turns hold. Its `<promote>` lines are
 * applied to state.json through the store, like any other state change, and reported.
 */
import { describeError } from "../errors.ts";
import { Regions } from "../prompt/regions.ts";
import { promptText } from "../prompt/prompt-text.ts";
import { taggedOwnText, type Section } from "../prompt/section.ts";
import { workingStateSection } from "../prompt/sections/working-state.ts";
import { summaryRequestRegions } from "../prompt/standard-regions.ts";
import * as ops from "../state/ops.ts";
import type { WorkingState } from "../state/schema.ts";
import type { StateStore } from "../state/store.ts";

export type Promotion =
  | { kind: "done"; id: string }
  | { kind: "decision"; title: string; why: string }
  | { kind: "task"; title: string };

const promotionRulesSection: Section = {
  id: "promotion_rules",
  region: "promotion_rules",
  stable: true,
  required: true,
  placement: "instructions",
  type: "instructions",
  format: "markdown",
  reason: "promotion_request",
  render: () => taggedOwnText("promotion_rules", promptText("promotion-rules")),
};

/** The summary request's regions plus the working state and the promotion rules. */
export function promotionSummaryRegions(): Regions {
  return summaryRequestRegions()
    .withRegion("promotion_rules", promotionRulesSection)
    .withRegion("state", workingStateSection)
    .withRegionalOrder(["summary_rules", "promotion_rules", "summary", "state", "evicted"]);
}

const PROMOTE_BLOCK = /<promote>([\s\S]*?)<\/promote>/i;

/** Splits a summary reply into the summary text and its promotion lines (unknown lines ignored). */
export function parsePromotions(reply: string): { summary: string; promotions: Promotion[] } {
  const match = PROMOTE_BLOCK.exec(reply);
  const summary = (match ? reply.slice(0, match.index) + reply.slice(match.index + match[0].length) : reply).trim();
  const promotions: Promotion[] = [];
  for (const raw of (match?.[1] ?? "").split("\n")) {
    const line = raw.trim().replace(/^[-*]\s*/, "");
    const done = /^done\s+(T-\d+)\b/i.exec(line);
    if (done?.[1]) {
      promotions.push({ kind: "done", id: done[1].toUpperCase() });
      continue;
    }
    const decision = /^decision\s+(.+?)\s+--\s+(.+)$/i.exec(line);
    if (decision?.[1] && decision[2]) {
      promotions.push({ kind: "decision", title: decision[1].trim(), why: decision[2].trim() });
      continue;
    }
    const task = /^task\s+(.+)$/i.exec(line);
    if (task?.[1]) promotions.push({ kind: "task", title: task[1].trim() });
  }
  return { summary, promotions };
}

/** The op for one promotion, or undefined when the state already has it (no duplicates, no reopening). */
export function promotionOp(promotion: Promotion, state: WorkingState, at: Date): ((s: WorkingState) => ops.OpResult) | undefined {
  switch (promotion.kind) {
    case "done": {
      const task = state.tasks_open.find((t) => t.id === promotion.id);
      return task && task.status !== "done" ? (s) => ops.completeTask(s, promotion.id, at) : undefined;
    }
    case "decision": {
      const known = state.decisions_recent.some((d) => d.title.toLowerCase() === promotion.title.toLowerCase());
      return known ? undefined : (s) => ops.addDecision(s, promotion.title, promotion.why, at);
    }
    case "task": {
      const known = state.tasks_open.some((t) => t.title.toLowerCase() === promotion.title.toLowerCase());
      return known ? undefined : (s) => ops.addTask(s, promotion.title, {}, at);
    }
  }
}

/** Applies promotions through the store, one locked update each; returns what to tell the user. */
/** New tasks and decisions one fold may add (marking tasks done is not limited): a model's flood stays out of the state. */
export const MAX_NEW_PER_FOLD = { task: 5, decision: 5 } as const;

export async function applyPromotions(store: Pick<StateStore, "read" | "update">, promotions: readonly Promotion[], at: Date = new Date()): Promise<string[]> {
  if (promotions.length === 0) return [];
  const notices: string[] = [];
  const first = await store.read();
  // A state.json the user is in the middle of editing (or that is damaged) is theirs to fix: a
  // promotion would move it aside and start a new one holding only what was promoted.
  if (first.source === "invalid") {
    return [`not promoted to the working state (${promotions.length} line${promotions.length === 1 ? "" : "s"}) while state.json is not valid: ${first.notices.join("; ") || "fix it, then the next fold promotes again"}`];
  }
  const added = { task: 0, decision: 0 };
  const dropped: string[] = [];
  for (const promotion of promotions) {
    try {
      const op = promotionOp(promotion, (await store.read()).state, at);
      if (!op) continue;
      if (promotion.kind !== "done") {
        if (added[promotion.kind] >= MAX_NEW_PER_FOLD[promotion.kind]) {
          dropped.push(`${promotion.kind} ${JSON.stringify(promotion.title.slice(0, 60))}`);
          continue;
        }
        added[promotion.kind]++;
      }
      const result = await store.update(op);
      notices.push(...result.notices);
      if (result.written) notices.push(`promoted to the working state: ${result.change}`);
    } catch (error) {
      notices.push(`could not promote ${promotion.kind} to the working state: ${describeError(error)}`);
    }
  }
  if (dropped.length > 0) {
    notices.push(`not promoted: ${dropped.length} more than the ${MAX_NEW_PER_FOLD.task} tasks and ${MAX_NEW_PER_FOLD.decision} decisions one fold may add (${dropped.slice(0, 3).join(", ")}${dropped.length > 3 ? ", …" : ""}); the summary keeps them`);
  }
  return notices;
}
