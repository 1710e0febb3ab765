import { ValarmindError } from "../errors.ts";

export interface BudgetShare {
  /** A piece's id, or a group's: `tools` (valarmind's own), `mcp:<server>`, `turn_steps`. */
  id: string;
  tokens: number;
  /** How many pieces a group holds. */
  pieces?: number;
}

const MCP_TOOL = /^tool:mcp__(.+?)__/;

/**
 * What takes the budget, largest first. Tool definitions count per source (valarmind's own, each
 * MCP server) and this turn's tool calls and results as one: 40 definitions of 300 tokens are what
 * a user can act on (offer fewer of a server's tools), 40 lines of 300 tokens each are not.
 */
export function budgetShares(pieces: ReadonlyArray<{ id: string; type: string; placement: string; tokens: number }>): BudgetShare[] {
  const groups = new Map<string, BudgetShare>();
  const shares: BudgetShare[] = [];
  for (const piece of pieces) {
    const server = piece.placement === "tools" ? MCP_TOOL.exec(piece.id)?.[1] : undefined;
    const group = piece.placement === "tools" ? (server !== undefined ? `mcp:${server}` : "tools") : piece.type === "task_step" ? "turn_steps" : undefined;
    if (group === undefined) {
      shares.push({ id: piece.id, tokens: piece.tokens });
      continue;
    }
    const share = groups.get(group) ?? { id: group, tokens: 0, pieces: 0 };
    share.tokens += piece.tokens;
    share.pieces = (share.pieces ?? 0) + 1;
    groups.set(group, share);
  }
  return [...shares, ...groups.values()].sort((a, b) => b.tokens - a.tokens);
}

function shown(share: BudgetShare): string {
  if (share.pieces === undefined) return `${share.id} ${share.tokens}`;
  const what = share.id === "tools" ? `valarmind's tools (${share.pieces})` : share.id === "turn_steps" ? `this turn's tool steps (${share.pieces})` : `MCP server ${share.id.slice(4)} (${share.pieces} tools)`;
  return `${what} ${share.tokens}`;
}

/** What to do, from what is largest: instruction files can be left out without touching anything (--no-context-files). */
function budgetHint(largest: readonly BudgetShare[]): string {
  const instructions = largest.slice(0, 5).filter((s) => /instructions|agents|project|personal|user_instructions/.test(s.id));
  const ways = ["raise maxContextTokens (MAX_CONTEXT_TOKENS, --budget, or maxContextTokens in your user config)"];
  if (instructions.length > 0) ways.push("leave the instruction files out with --no-context-files (AGENTS.md, CLAUDE.md and VALARMIND.md are among the largest)");
  const servers = largest.slice(0, 5).filter((s) => s.id.startsWith("mcp:")).map((s) => s.id.slice(4));
  if (servers.length > 0) ways.push(`offer fewer MCP tools (a "tools" list under mcpServers.${servers[0]} in your config, or 'valarmind mcp remove ${servers[0]}')`);
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
    const top = largest.slice(0, 5).map(shown).join(", ");
    // Exit 2, a configuration error: the budget is too small for what must be sent.
    super(`${what} need ${needed} tokens, over the budget of ${budget} (MAX_CONTEXT_TOKENS); largest: ${top}`, { hint: budgetHint(largest), exitCode: 2 });
    this.name = "BudgetExceededError";
    this.neededTokens = needed;
    this.budgetTokens = budget;
    this.largest = largest;
  }
}
