/**
 * `--budget <tokens>` (chat and prompt): MAX_CONTEXT_TOKENS for one run. The same rule as the
 * setting's own lower bound, so a run cannot take a budget a config file could not.
 */
import { UsageError } from "../errors.ts";

export const MIN_BUDGET_TOKENS = 1000;

export function parseBudgetFlag(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < MIN_BUDGET_TOKENS) {
    throw new UsageError(`--budget must be an integer of at least ${MIN_BUDGET_TOKENS} tokens, got '${value}'`, { hint: "Pass a whole number of tokens, e.g. --budget 8000." });
  }
  return n;
}
