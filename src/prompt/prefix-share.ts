/**
 * How much of a request is an unchanged prefix of the previous one — the part a provider's
 * prefix cache can serve. Requests are compared in the order the API reads them (tools,
 * instructions, input items), as text; the common prefix is then counted in tokens.
 */
import type { ModelRequest } from "../model/types.ts";
import { toolText } from "./request-assembly.ts";

/** The request as one string, in the order the API caches it. */
export function requestText(request: Pick<ModelRequest, "tools" | "instructions" | "input">): string {
  const parts: string[] = request.tools.map((t) => `${toolText(t)}\n`);
  parts.push(`${request.instructions}\n`);
  for (const item of request.input) {
    if (item.type === "message") parts.push(`[${item.role}]\n${item.content}\n`);
    else if (item.type === "function_call") parts.push(`[call ${item.call_id}]\n${item.name} ${item.arguments}\n`);
    else if (item.type === "function_call_output") parts.push(`[output ${item.call_id}]\n${item.output}\n`);
    else if (item.type === "reasoning") parts.push(`[reasoning ${item.id}]\n${item.encrypted_content ?? ""}\n`);
    else parts.push(`[reasoning]\n${item.text}\n`);
  }
  return parts.join("");
}

export function commonPrefixLength(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  // Compare in chunks first: prompts share long prefixes.
  while (i + 256 <= n && a.slice(i, i + 256) === b.slice(i, i + 256)) i += 256;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/** Tokens of `next` that are an unchanged prefix of `previous`, and their share of `next`. */
export function prefixShare(
  previous: Pick<ModelRequest, "tools" | "instructions" | "input">,
  next: Pick<ModelRequest, "tools" | "instructions" | "input">,
  count: (text: string) => number,
): { prefixTokens: number; totalTokens: number; share: number } {
  const a = requestText(previous);
  const b = requestText(next);
  const prefixTokens = count(b.slice(0, commonPrefixLength(a, b)));
  const totalTokens = count(b);
  return { prefixTokens, totalTokens, share: totalTokens === 0 ? 0 : prefixTokens / totalTokens };
}
