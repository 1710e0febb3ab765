/** Pure formatting for the status line, so its figures can be tested without rendering. */
import type { StatusSnapshot } from "../../agent/front-end-contract.ts";
import { terminalSafe } from "../terminal-safe-text.ts";
import { formatUsd } from "../../agent/session-cost.ts";

export function formatTokens(count: number): string {
  if (count < 1000) return String(count);
  if (count < 10_000) return `${(count / 1000).toFixed(1)}k`;
  if (count < 1_000_000) return `${Math.round(count / 1000)}k`;
  return `${(count / 1_000_000).toFixed(1)}M`;
}

export function formatPercent(share: number): string {
  return `${Math.round(Math.min(1, Math.max(0, share)) * 100)}%`;
}

/** A bar of `cells` cells: how full the prompt budget is. */
export function budgetBar(
  used: number,
  budget: number,
  cells: number,
): { filled: string; empty: string; share: number } {
  const share = budget > 0 ? Math.min(1, Math.max(0, used / budget)) : 0;
  const count = Math.round(share * cells);
  return { filled: "█".repeat(count), empty: "░".repeat(cells - count), share };
}

/** A share of the model's window: "<1%" rather than a misleading "0%" once anything is sent. */
export function formatWindowShare(share: number): string {
  return share > 0 && share < 0.005 ? "<1%" : formatPercent(share);
}

export interface StatusFields {
  model: string;
  prompt: string;
  share: number;
  /** The last request's share of the model's context window and the window (`4% of 400k`); undefined when the window is unknown. */
  window: string | undefined;
  cached: string;
  session: string;
  /** The session's effective input (uncached + 0.1 × cached) and, with prices set, its cost. */
  effective: string;
  approvals: string;
  goal: string;
  now: string;
}

/** The figures as shown; the texts (goal and `now` come from the state file) are terminal-safe. */
export function statusFields(status: StatusSnapshot): StatusFields {
  return {
    model: terminalSafe(status.model),
    prompt: `${formatTokens(status.promptTokens)}/${formatTokens(status.budgetTokens)}`,
    share: status.budgetTokens > 0 ? status.promptTokens / status.budgetTokens : 0,
    window:
      status.contextWindowTokens !== undefined && status.contextWindowTokens > 0
        ? `${formatWindowShare(status.promptTokens / status.contextWindowTokens)} of ${formatTokens(status.contextWindowTokens)}`
        : undefined,
    // The session's cached share once any usage is in (what the cost depends on); else the last request's.
    cached: status.cost && status.cost.requests > 0 ? formatPercent(status.cost.cachedShare) : status.cachedShare === undefined ? "–" : formatPercent(status.cachedShare),
    session: formatTokens(status.sessionTokens),
    effective: status.cost && status.cost.requests > 0 ? `${formatTokens(Math.round(status.cost.effectiveInput))}${status.cost.usd !== undefined ? ` ${formatUsd(status.cost.usd)}` : ""}` : "–",
    approvals: terminalSafe(status.approvals),
    goal: status.goal.trim() === "" ? "(no goal set: /goal TEXT)" : terminalSafe(status.goal),
    now: terminalSafe(status.now.trim()),
  };
}
