/**
 * A token count as a server reported it, made safe to add up, price and write: a whole number
 * from 0 to MAX_REPORTED_TOKENS. A fraction is rounded; anything else (a string, a negative, NaN,
 * Infinity, 1e308) is no count at all, 0, so a server's junk never becomes NaN, a negative cost,
 * an Infinity that no schema takes, or a failed turn for an answer already given.
 */

/** More than any model's context and output in one request, by two orders of magnitude. */
export const MAX_REPORTED_TOKENS = 1_000_000_000;

export function reportedTokens(value: unknown): number | undefined {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) return undefined;
  const whole = Math.round(value);
  return whole <= MAX_REPORTED_TOKENS ? whole : undefined;
}
