/**
 * `--budget <tokens>` (chat and prompt): MAX_CONTEXT_TOKENS for one run. The same rule as the
 * setting's own lower bound, so a run cannot take a budget a config file could not.
 */
import { UsageError } from "../errors.ts";

export const MIN_BUDGET_TOKENS = 1000;

/** Past this, a number is no longer exact in JavaScript (…993 became …992), and no model has such a window. */
export const MAX_BUDGET_TOKENS = Number.MAX_SAFE_INTEGER;

export function parseBudgetFlag(value: string): number {
  // Digits only: "0x2000", " 9000 " and "1e4" are not what a user types for tokens.
  const n = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (n > MAX_BUDGET_TOKENS) {
    throw new UsageError(`--budget is out of range: '${value.length > 40 ? `${value.slice(0, 39)}…` : value}' is more than ${MAX_BUDGET_TOKENS} tokens`, { hint: "Pass the model's context window or less, e.g. --budget 200000." });
  }
  if (!Number.isInteger(n) || n < MIN_BUDGET_TOKENS) {
    throw new UsageError(`--budget must be an integer of at least ${MIN_BUDGET_TOKENS} tokens, got '${value}'`, { hint: "Pass a whole number of tokens, e.g. --budget 8000." });
  }
  return n;
}
