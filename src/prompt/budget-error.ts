import { ValarmindError } from "../errors.ts";

export interface BudgetShare {
  id: string;
  tokens: number;
}

/**
 * The request cannot fit MAX_CONTEXT_TOKENS even after every cutoff step: what must stay (core
 * rules, tools, the current task, the instruction files) is too large. Says what is largest.
 */
export class BudgetExceededError extends ValarmindError {
  readonly kind = "budget";
  readonly neededTokens: number;
  readonly budgetTokens: number;
  readonly largest: BudgetShare[];

  constructor(what: string, needed: number, budget: number, largest: BudgetShare[]) {
    const top = largest
      .slice(0, 5)
      .map((s) => `${s.id} ${s.tokens}`)
      .join(", ");
    super(`${what} need ${needed} tokens, over the budget of ${budget} (MAX_CONTEXT_TOKENS); largest: ${top}`, {
      hint: "Raise maxContextTokens (MAX_CONTEXT_TOKENS or .valarmind/config.json), shorten VALARMIND.md or the message, or pass --budget.",
    });
    this.name = "BudgetExceededError";
    this.neededTokens = needed;
    this.budgetTokens = budget;
    this.largest = largest;
  }
}
