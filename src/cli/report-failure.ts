import { ValarmindError } from "../errors.ts";

/** Prints an error for a user (no stack trace for known errors) and returns the exit code. */
export function reportFailure(error: unknown): number {
  if (error instanceof ValarmindError) {
    process.stderr.write(`valarmind: ${error.message}\n`);
    if (error.hint) process.stderr.write(`  ${error.hint}\n`);
    return error.exitCode;
  }
  const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
  process.stderr.write(`valarmind: unexpected error: ${text}\n`);
  return 1;
}
