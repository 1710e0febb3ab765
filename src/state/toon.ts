/**
 * The working state as TOON for the prompt: project (pure), encode with @toon-format/toon, decode
 * again and require the result to equal the projection, count tokens exactly. Called every turn
 * by the prompt builder and by `valarmind compact`.
 */
import { decode } from "@toon-format/toon";
import { describeError, ValarmindError } from "../errors.ts";
import { countTokensIfReady, loadTokenizer } from "../tokens/tokenizer.ts";
import { projectState, renderToon, STATE_TOKEN_CAP, type StateProjection } from "./projection.ts";
import type { WorkingState } from "./schema.ts";

export interface EncodeStateOptions {
  maxTokens?: number;
  /** Exact counter; defaults to the o200k tokenizer of src/tokens/tokenizer.ts (loaded on first use). */
  countTokens?: (text: string) => number;
}

export interface StateToon {
  toon: string;
  /** Exact tokens of `toon`. */
  tokens: number;
  /** What was left out to fit `maxTokens` (see projectState). */
  omitted: string[];
  projection: StateProjection;
}

export { renderToon };

/** The first path at which `actual` differs from `expected`, or undefined when they are equal. */
export function firstDifference(expected: unknown, actual: unknown, path = ""): string | undefined {
  if (Object.is(expected, actual)) return undefined;
  if (typeof expected !== "object" || typeof actual !== "object" || expected === null || actual === null) {
    return `${path || "/"}: expected ${JSON.stringify(expected)}, decoded ${JSON.stringify(actual)}`;
  }
  if (Array.isArray(expected) !== Array.isArray(actual)) return `${path || "/"}: array/object mismatch`;
  const e = expected as Record<string, unknown>;
  const a = actual as Record<string, unknown>;
  const keys = new Set([...Object.keys(e), ...Object.keys(a)]);
  for (const key of keys) {
    const diff = firstDifference(e[key], a[key], `${path}/${key}`);
    if (diff) return diff;
  }
  return undefined;
}

/** Decodes `toon` and throws a clear error unless it equals `projection`. */
export function checkRoundTrip(toon: string, projection: unknown): void {
  let decoded: unknown;
  try {
    decoded = decode(toon);
  } catch (error) {
    throw new ValarmindError(`TOON round trip failed: the encoded state does not decode (${describeError(error)})`, {
      hint: "This is a bug in the TOON encoding of the working state; please report it with your state.json.",
      cause: error,
    });
  }
  const diff = firstDifference(projection, decoded);
  if (diff) {
    throw new ValarmindError(`TOON round trip failed: decoded state differs from the projection at ${diff}`, {
      hint: "This is a bug in the TOON encoding of the working state; please report it with your state.json.",
    });
  }
}

export async function encodeStateToon(state: WorkingState, options: EncodeStateOptions = {}): Promise<StateToon> {
  let count = options.countTokens;
  if (!count) {
    await loadTokenizer();
    count = (text: string) => countTokensIfReady(text) ?? Number.NaN;
  }
  const { projection, omitted } = projectState(state, {
    maxTokens: options.maxTokens ?? STATE_TOKEN_CAP,
    countTokens: count,
    render: renderToon,
  });
  const toon = renderToon(projection);
  checkRoundTrip(toon, projection);
  return { toon, tokens: count(toon), omitted, projection };
}
