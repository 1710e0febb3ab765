import { ValarmindError } from "../errors.ts";

export interface BudgetShare {
  id: string;
  tokens: number;
}

/** What to do, from what is largest: instruction files can be left out without touching anything (--no-context-files). */
function budgetHint(largest: readonly BudgetShare[]): string {
  const instructions = largest.slice(0, 5).filter((s) => /instructions|agents|project|personal|user_instructions/.test(s.id));
  const ways = ["raise maxContextTokens (MAX_CONTEXT_TOKENS, --budget, or maxContextTokens in your user config)"];
  if (instructions.length > 0) ways.push("leave the instruction files out with --no-context-files (AGENTS.md, CLAUDE.md and VALARMIND.md are among the largest)");
  ways.push("or shorten the message");
  return `${ways.join(", ")}.`.replace(/^./, (c) => c.toUpperCase());
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
    super(`${what} need ${needed} tokens, over the budget of ${budget} (MAX_CONTEXT_TOKENS); largest: ${top}`, { hint: budgetHint(largest) });
    this.name = "BudgetExceededError";
    this.neededTokens = needed;
    this.budgetTokens = budget;
    this.largest = largest;
  }
}
