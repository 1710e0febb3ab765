import { ValarmindError } from "../errors.ts";
import { terminalSafe } from "../ui/terminal-safe-text.ts";
import { fileSystemFailure } from "../state/fs-failure.ts";

/** A file-system error that escaped without context: still name the file, without a stack trace. */
function asFileSystemFailure(error: unknown): ValarmindError | undefined {
  const { path, syscall } = (error ?? {}) as { path?: unknown; syscall?: unknown };
  if (typeof path !== "string") return undefined;
  const writes = ["open", "write", "mkdir", "rename", "unlink", "rmdir", "chmod", "utime", "copyfile", "symlink"];
  return fileSystemFailure(error, typeof syscall === "string" && writes.includes(syscall) ? "write" : "read", path);
}

/** Prints an error for a user (no stack trace for known errors) and returns the exit code. */
export function reportFailure(thrown: unknown): number {
  const error = asFileSystemFailure(thrown) ?? thrown;
  if (error instanceof ValarmindError) {
    // Messages quote paths, settings and server answers: nothing in them may act on the terminal.
    process.stderr.write(`valarmind: ${terminalSafe(error.message)}\n`);
    if (error.hint) process.stderr.write(`  ${terminalSafe(error.hint)}\n`);
    return error.exitCode;
  }
  const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
  process.stderr.write(`valarmind: unexpected error: ${terminalSafe(text)}\n`);
  return 1;
}
