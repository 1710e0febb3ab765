/**
 * Delays from the environment (VALARMIND_STDIN_WAIT_MS, VALARMIND_SESSION_WAIT_MS) and settings:
 * whole milliseconds a timer can take. Past 2^31-1 ms (24.8 days) a timer fires at once, so a
 * "never time out" value once made every wait end immediately.
 */
import { UsageError } from "../errors.ts";

/** The longest delay a timer takes. */
export const MAX_TIMER_MS = 2_147_483_647;

/** `env[name]` as whole milliseconds from 0 to MAX_TIMER_MS, `fallback` when unset; a usage error naming the variable otherwise. */
export function envMilliseconds(env: Record<string, string | undefined>, name: string, fallback: number, hint: string): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === "") return fallback;
  const n = Number(raw);
  if (Number.isInteger(n) && n >= 0 && n <= MAX_TIMER_MS) return n;
  throw new UsageError(`environment variable ${name}=${JSON.stringify(raw)} is not a whole number of milliseconds from 0 to ${MAX_TIMER_MS}`, { hint });
}
