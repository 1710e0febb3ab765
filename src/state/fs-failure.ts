/**
 * File-system failures a user can meet (a read-only `.valarmind/`, a full disk) as errors that
 * name the file and say what to check, instead of an unexpected error with a stack trace.
 */
import { dirname } from "node:path";
import { ValarmindError } from "../errors.ts";

const REASONS: Record<string, string> = {
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  EROFS: "read-only file system",
  ENOSPC: "no space left on the device",
  EDQUOT: "disk quota exceeded",
  ENOENT: "no such file or directory",
  ENOTDIR: "a path component is not a directory",
  EISDIR: "it is a directory",
};

export function errnoCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

/** A ValarmindError for a known errno (undefined otherwise), naming `file` and what to check. */
export function fileSystemFailure(error: unknown, action: "write" | "read", file: string): ValarmindError | undefined {
  const code = errnoCode(error);
  const reason = code === undefined ? undefined : REASONS[code];
  if (reason === undefined) return undefined;
  return new ValarmindError(`cannot ${action} ${file}: ${reason}`, {
    hint:
      code === "EISDIR"
        ? `A directory is where valarmind keeps this file: move or remove ${file}, then run the command again.`
        : action === "write"
          ? `Check that you can write to ${dirname(file)} (its permissions, a read-only mount, free disk space); nothing was changed.`
          : `Check that ${file} exists and that you can read it.`,
    cause: error,
  });
}
