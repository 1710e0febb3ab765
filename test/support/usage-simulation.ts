/**
 * Plausible `usage` for fake answers, so benchmarks against the fake server see numbers shaped like
 * OpenAI's: `input_tokens` is the exact o200k count of the request's text (tools, instructions,
 * input, in the order the API caches them), `cached_tokens` follows the prompt-caching rule
 * (the longest prefix shared with an earlier request of the same `prompt_cache_key`, counted only
 * from 1024 tokens up and in steps of 128). An approximation: the API's own serialization differs.
 */
import { countTokens } from "../../src/tokens/tokenizer.ts";
import type { UsageSpec } from "./sse-script.ts";

/** The request's cacheable text, stable order: tools, then instructions, then input items. */
export function cacheableText(body: Record<string, unknown>): string {
  const parts = [JSON.stringify(body.tools ?? []), String(body.instructions ?? "")];
  const input = body.input;
  if (typeof input === "string") parts.push(input);
  else if (Array.isArray(input)) for (const item of input) parts.push(JSON.stringify(item));
  return parts.join("\n");
}

function commonPrefixLength(a: string, b: string): number {
  const max = Math.min(a.length, b.length);
  let i = 0;
  while (i < max && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/** Remembers earlier requests (per prompt_cache_key) and gives the usage the next one would get. */
export function createUsageSimulator(): (body: Record<string, unknown>, outputTokens?: number) => Promise<UsageSpec> {
  const seen = new Map<string, string[]>();
  return async (body, outputTokens = 50) => {
    const text = cacheableText(body);
    const key = typeof body.prompt_cache_key === "string" ? body.prompt_cache_key : "";
    const earlier = seen.get(key) ?? [];
    const shared = earlier.reduce((best, previous) => Math.max(best, commonPrefixLength(previous, text)), 0);
    earlier.push(text);
    seen.set(key, earlier);
    const input = await countTokens(text);
    const prefix = shared > 0 ? await countTokens(text.slice(0, shared)) : 0;
    const cached = prefix >= 1024 ? Math.floor(prefix / 128) * 128 : 0;
    return { input_tokens: input, cached_tokens: Math.min(cached, input), output_tokens: outputTokens, reasoning_tokens: 0 };
  };
}
