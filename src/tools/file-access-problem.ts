/**
 * What a failed open, stat or walk of a workspace path tells the model. A missing file and one
 * the file system refuses need different next steps (find the right path; ask the user to fix the
 * permissions), so they are never reported as the same thing.
 */
import { isAbsolute, relative } from "node:path";
import { errnoCode } from "../errors.ts";


export interface FileAccessProblem {
  kind: "missing" | "permission";
  /** A sentence without a final period, naming `rel`. */
  message: string;
}

/** The problem `error` (from opening or stating `rel`) reports; undefined for other failures. */
export function fileAccessProblem(error: unknown, rel: string): FileAccessProblem | undefined {
  const code = errnoCode(error);
  if (code === "ENOENT" || code === "ENOTDIR") return { kind: "missing", message: `${rel} does not exist` };
  if (code === "EACCES" || code === "EPERM") {
    return {
      kind: "permission",
      message: `permission denied: the file system refuses valarmind access to ${rel} (${code}); the user can change its permissions if valarmind should use it`,
    };
  }
  return undefined;
}

/**
 * A permission error thrown from deeper in a file tool (a walk into an unreadable directory, a
 * stat behind one), told like `fileAccessProblem` with the refused path relative to `root`.
 */
export function permissionProblem(error: unknown, root: string): FileAccessProblem | undefined {
  const code = errnoCode(error);
  if (code !== "EACCES" && code !== "EPERM") return undefined;
  const path = typeof error === "object" && error !== null && "path" in error && typeof error.path === "string" ? error.path : undefined;
  const rel = path === undefined ? "a file in the workspace" : isAbsolute(path) ? relative(root, path) || "." : path;
  return fileAccessProblem(error, rel);
}
