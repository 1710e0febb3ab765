/**
 * When and how long to wait before retrying a failed request. valarmind retries itself (the SDK runs
 * with maxRetries: 0) so each wait is announced as a `retry` event and the abort signal cuts it short;
 * see docs/adr/0020-own-retries-not-sdk.md. Pure apart from `sleep`.
 */

export interface RetryTuning {
  /** Retries after the first attempt. */
  maxRetries: number;
  /** First backoff when the server gives no Retry-After; doubles per attempt. */
  baseDelayMs: number;
  /** Cap of our own backoff. */
  maxBackoffMs: number;
  /** Longest server-requested wait we honour; beyond it the error is reported instead. */
  maxServerDelayMs: number;
  /** Source of jitter in [0, 1); injectable so tests are deterministic. */
  random: () => number;
}

export const DEFAULT_RETRY_TUNING: RetryTuning = {
  maxRetries: 3,
  baseDelayMs: 500,
  maxBackoffMs: 8000,
  maxServerDelayMs: 60_000,
  random: Math.random,
};

/** The part of a failed HTTP exchange that decides a retry. */
export interface RetryInput {
  status?: number;
  code?: string | null;
  headers?: Headers;
  /** Transport failure before any response (reset, timeout); not "connection refused". */
  transient?: boolean;
  /** The server's error message: OpenAI's 429 says "Please try again in 11.054s" and sends no Retry-After. */
  message?: string;
}

/** The wait a 429 message names ("try again in 11.054s", "in 820ms"), in ms. */
export function messageRetryDelayMs(message: string | undefined): number | undefined {
  const match = /try again in (\d+(?:\.\d+)?)\s*(ms|s)\b/i.exec(message ?? "");
  if (!match?.[1]) return undefined;
  const value = Number(match[1]) * (match[2]?.toLowerCase() === "ms" ? 1 : 1000);
  return Number.isFinite(value) && value >= 0 ? Math.ceil(value) : undefined;
}

/** Server-requested delay: `retry-after-ms` (float ms) first, then `retry-after` (seconds or HTTP date). */
export function serverRetryDelayMs(headers: Headers | undefined, now: number = Date.now()): number | undefined {
  if (!headers) return undefined;
  const ms = headers.get("retry-after-ms");
  if (ms !== null && ms.trim() !== "") {
    const value = Number(ms);
    if (Number.isFinite(value) && value >= 0) return value;
  }
  const after = headers.get("retry-after");
  if (after === null || after.trim() === "") return undefined;
  const seconds = Number(after);
  if (Number.isFinite(seconds)) return seconds >= 0 ? seconds * 1000 : undefined;
  const date = Date.parse(after);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

export function isRetryable(input: RetryInput): boolean {
  const override = input.headers?.get("x-should-retry");
  if (override === "true") return true;
  if (override === "false") return false;
  if (input.transient) return true;
  const status = input.status;
  if (status === undefined) return false;
  if (status === 429) return input.code !== "insufficient_quota";
  return status === 408 || status === 409 || status >= 500;
}

/** Our exponential backoff with up to 25% jitter downwards (as the SDK does). */
export function backoffDelayMs(retryNumber: number, tuning: RetryTuning): number {
  const raw = Math.min(tuning.baseDelayMs * 2 ** Math.max(0, retryNumber - 1), tuning.maxBackoffMs);
  return Math.round(raw * (1 - tuning.random() * 0.25));
}

export type RetryDecision =
  | { retry: true; delayMs: number; serverAsked: boolean }
  | { retry: false; reason: "not_retryable" | "exhausted" | "wait_too_long"; delayMs?: number };

/** `retryNumber` is the retry about to happen (1 for the first). */
export function decideRetry(input: RetryInput, retryNumber: number, tuning: RetryTuning): RetryDecision {
  if (!isRetryable(input)) return { retry: false, reason: "not_retryable" };
  if (retryNumber > tuning.maxRetries) return { retry: false, reason: "exhausted" };
  const asked = serverRetryDelayMs(input.headers) ?? (input.status === 429 ? messageRetryDelayMs(input.message) : undefined);
  if (asked !== undefined) {
    if (asked > tuning.maxServerDelayMs) return { retry: false, reason: "wait_too_long", delayMs: asked };
    return { retry: true, delayMs: Math.round(asked), serverAsked: true };
  }
  return { retry: true, delayMs: backoffDelayMs(retryNumber, tuning), serverAsked: false };
}

/** Resolves after `ms`, or early (without throwing) when the signal aborts; the caller checks the signal. */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted || ms <= 0) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}

export function describeDelay(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)}ms` : `${Math.round(ms / 100) / 10}s`;
}
