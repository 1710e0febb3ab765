/**
 * `core.hooksPath` from the repository's own `.git/config`, resolved against the workspace
 * (undefined when unset): git runs the hooks there, unsandboxed, on the user's next commit. Read
 * only when `.git/config` is a regular file of sane size (a FIFO there would block).
 */
import { constants, closeSync, fstatSync, openSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";

const CONFIG_MAX_BYTES = 1024 * 1024;

export function configuredHooksPath(root: string): string | undefined {
  let text: string;
  let fd: number | undefined;
  try {
    fd = openSync(join(root, ".git", "config"), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY);
    const info = fstatSync(fd);
    if (!info.isFile() || info.size > CONFIG_MAX_BYTES) return undefined;
    text = readFileSync(fd, "utf8");
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  const value = /^\s*hookspath\s*=\s*(.+?)\s*$/im.exec(text)?.[1]?.replace(/^"(.*)"$/, "$1");
  return value === undefined || value === "" ? undefined : resolve(root, value);
}
