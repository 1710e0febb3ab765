/**
 * Errors a user can meet. Each carries what happened, to which file or request, and what to do.
 * The CLI prints `message` (and `hint`) without a stack trace and exits with `exitCode`.
 */
/** 0, 1, 2 as README documents; 129, 130, 143 for SIGHUP, SIGINT, SIGTERM (128 + the signal). */
export type ExitCode = 0 | 1 | 2 | 129 | 130 | 143;

export class ValarmindError extends Error {
  readonly exitCode: ExitCode;
  readonly hint: string | undefined;
  constructor(message: string, options: { exitCode?: ExitCode; hint?: string; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = "ValarmindError";
    this.exitCode = options.exitCode ?? 1;
    this.hint = options.hint;
  }
}

/** A usage or configuration problem: bad flags, invalid config, a file from a newer valarmind. Exit 2. */
export class UsageError extends ValarmindError {
  constructor(message: string, options: { hint?: string; cause?: unknown } = {}) {
    super(message, { ...options, exitCode: 2 });
    this.name = "UsageError";
  }
}

/** The `code` of a Node system error (ENOENT, EACCES, EBUSY, …); undefined for anything else. */
export function errnoCode(error: unknown): string | undefined {
  return typeof error === "object" && error !== null && "code" in error ? String(error.code) : undefined;
}

export function describeError(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
