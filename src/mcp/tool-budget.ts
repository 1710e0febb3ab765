/**
 * How many tokens the MCP tool definitions of a run may take. They ride on every request, next to
 * what every request carries whatever happens (the core rules and the built-in tools, ~1,900
 * tokens, which the cutoff never cuts): a quarter of maxContextTokens, and never so much that
 * the fixed part, the MCP tools and a short message would not fit. Otherwise a budget that works
 * without MCP would make every turn fail with a budget error that names no MCP setting.
 */
import type { Settings } from "../config/settings-schema.ts";
import { promptText } from "../prompt/prompt-text.ts";
import { FRAMING_INSTRUCTIONS, FRAMING_PER_INPUT_ITEM, FRAMING_REPLY, toolText } from "../prompt/request-assembly.ts";
import { taggedOwnText } from "../prompt/section.ts";
import { toolSpecs } from "../tools/registry.ts";

/**
 * Left over for the rest of a request: the user's message (the cutoff cuts it to 128 tokens at
 * the least), the volatile context and the instruction files, the framing of a few items.
 */
export const MESSAGE_ROOM_TOKENS = 512;

/** Tokens every request takes before any MCP tool: the built-in tools, the core rules, framing. */
export function fixedRequestTokens(count: (text: string) => number, settings: Partial<Pick<Settings, "shellTimeoutMs">> = {}): number {
  const tools = toolSpecs(settings.shellTimeoutMs !== undefined ? { shellTimeoutMs: settings.shellTimeoutMs } : undefined).reduce((n, spec) => n + count(toolText(spec)), 0);
  const core = count(taggedOwnText("core_rules", promptText("core-rules")));
  return tools + core + FRAMING_INSTRUCTIONS + FRAMING_PER_INPUT_ITEM + FRAMING_REPLY;
}

/** min(budget / 4, budget − the fixed part − room for a message), never below 0. */
export function mcpToolTokenCap(maxContextTokens: number, fixedTokens: number): number {
  return Math.max(0, Math.min(Math.floor(maxContextTokens / 4), maxContextTokens - fixedTokens - MESSAGE_ROOM_TOKENS));
}
