/**
 * Opening files inside the workspace so that nothing can redirect the open (docs/security.md).
 * `confinePath` checks a path when a call arrives; these functions check again at the moment of
 * the read or write, on the opened file itself: the last component is opened without following a
 * symlink, parents are walked with lstat (no symlinked directory), and the opened descriptor's
 * real location is verified (Linux: /proc/self/fd; elsewhere: device and inode against the path),
 * so a directory swapped for a symlink while the user read the approval prompt cannot send the
 * write outside. FIFOs, sockets and devices are refused (they block or never end).
 */
import { constants, readlinkSync, type Stats } from "node:fs";
import { lstat, mkdir, open, realpath, stat, unlink, type FileHandle } from "node:fs/promises";
import { join } from "node:path";
import { errnoCode } from "../errors.ts";
import { fileAccessProblem } from "./file-access-problem.ts";
import { describeError } from "../errors.ts";

const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;

/** "a FIFO", "a socket", "a character device", "a block device"; undefined for files and directories. */
export function specialFileKind(info: Stats): string | undefined {
  if (info.isFIFO()) return "a FIFO (named pipe)";
  if (info.isSocket()) return "a socket";
  if (info.isCharacterDevice()) return "a character device";
  if (info.isBlockDevice()) return "a block device";
  return undefined;
}

/** Where an open descriptor really is; undefined where the platform cannot tell (then inode checks apply). */
function descriptorPath(handle: FileHandle): string | undefined {
  if (process.platform !== "linux") return undefined;
  try {
    return readlinkSync(`/proc/self/fd/${handle.fd}`);
  } catch {
    return undefined;
  }
}

/** True when `handle` is the file at `expected` (a symlink-free absolute path). */
async function isAt(handle: FileHandle, expected: string, info: Stats): Promise<boolean> {
  const actual = descriptorPath(handle);
  if (actual !== undefined) return actual === expected;
  try {
    const now = await lstat(expected);
    return (await realpath(expected)) === expected && now.ino === info.ino && now.dev === info.dev;
  } catch {
    return false;
  }
}

export type ConfinedRead =
  | { ok: true; bytes: Buffer; links: number; mode: number }
  | { ok: false; reason: "missing" | "permission" | "directory" | "special" | "too_large" | "moved"; problem: string; size?: number };

/**
 * Reads the regular file at `abs` (a real path inside the workspace, from confinePath), at most
 * `maxBytes`. `rel` names it in messages.
 */
export async function readConfined(abs: string, rel: string, maxBytes: number): Promise<ConfinedRead> {
  let handle: FileHandle;
  try {
    handle = await open(abs, READ_FLAGS);
  } catch (error) {
    const access = fileAccessProblem(error, rel);
    if (access) return { ok: false, reason: access.kind, problem: access.message };
    const code = errnoCode(error);
    if (code === "ELOOP") return { ok: false, reason: "moved", problem: `${rel} became a symlink after it was checked; not followed` };
    if (code === "EISDIR") return { ok: false, reason: "directory", problem: `${rel} is a directory` };
    // Opening a socket fails with ENXIO: say what it is.
    const special = code === "ENXIO" || code === "EOPNOTSUPP" ? await lstat(abs).then(specialFileKind, () => undefined) : undefined;
    if (special) return { ok: false, reason: "special", problem: `${rel} is ${special}, not a regular file; it is not read` };
    throw error;
  }
  try {
    const info = await handle.stat();
    if (info.isDirectory()) return { ok: false, reason: "directory", problem: `${rel} is a directory` };
    const special = specialFileKind(info);
    if (special) return { ok: false, reason: "special", problem: `${rel} is ${special}, not a regular file; it is not read` };
    if (!(await isAt(handle, abs, info))) return { ok: false, reason: "moved", problem: `${rel} was replaced while it was being opened; not read` };
    if (info.size > maxBytes) return { ok: false, reason: "too_large", problem: `${rel} is ${info.size} bytes, over the cap of ${maxBytes}`, size: info.size };
    const buffer = Buffer.alloc(info.size);
    let filled = 0;
    while (filled < info.size) {
      const { bytesRead } = await handle.read(buffer, filled, info.size - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    return { ok: true, bytes: buffer.subarray(0, filled), links: info.nlink, mode: info.mode & 0o7777 };
  } finally {
    await handle.close();
  }
}

/** Hard links of the file at `abs` (1 for a file only this workspace names; 0 when it does not exist). */
export async function linkCount(abs: string): Promise<number> {
  try {
    return (await lstat(abs)).nlink;
  } catch {
    return 0;
  }
}

/** The escalation reason for a file with several names, one of which may be outside the workspace. */
export function hardLinkWarning(rel: string, links: number): string | undefined {
  return links > 1 ? `${rel} has ${links} hard links: the same file also has another name, which may be outside the workspace` : undefined;
}

/** Creates the parent directories of `rel` under `rootReal`, refusing any that is a symlink or not a directory. */
async function openParents(rootReal: string, rel: string): Promise<string> {
  const parts = rel.split("/");
  parts.pop();
  let dir = rootReal;
  for (const part of parts) {
    const next = join(dir, part);
    let info: Stats | undefined;
    try {
      info = await lstat(next);
    } catch (error) {
      if (errnoCode(error) !== "ENOENT") throw error;
      await mkdir(next).catch((e: unknown) => {
        if (errnoCode(e) !== "EEXIST") throw e;
      });
      info = await lstat(next);
    }
    if (info.isSymbolicLink()) throw new ConfinedWriteError(`${rel}: ${part}/ became a symlink after the change was approved; nothing was written`);
    if (!info.isDirectory()) throw new ConfinedWriteError(`${rel}: ${part} is not a directory; nothing was written`);
    dir = next;
  }
  return dir;
}

export class ConfinedWriteError extends Error {}

export interface PlannedWrite {
  /** The text (or exact bytes, for undo) the change was computed from; undefined: the file must still not exist. */
  before: string | Uint8Array | undefined;
  after: string | Uint8Array;
  /** Hard links the approval covered (1 unless the user was warned about more). */
  approvedLinks: number;
  /** Permission bits of a file this write creates (undo restoring a deleted file); default 0666 less the umask. */
  mode?: number;
}

const asBytes = (data: string | Uint8Array): Buffer => (typeof data === "string" ? Buffer.from(data, "utf8") : Buffer.from(data));

/**
 * Writes `plan.after` to `rel` (workspace-relative, symlink-free, from confinePath) if the file
 * still holds `plan.before`, resolving and opening it now, after the approval. Throws
 * ConfinedWriteError (nothing written) when anything moved.
 */
export async function writeConfined(rootReal: string, rel: string, plan: PlannedWrite): Promise<void> {
  const dir = await openParents(rootReal, rel);
  const target = join(dir, rel.split("/").pop() ?? "");
  let handle: FileHandle;
  const creating = plan.before === undefined;
  try {
    handle = creating
      ? await open(target, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, plan.mode ?? 0o666)
      : await open(target, constants.O_RDWR | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = errnoCode(error);
    if (code === "EEXIST") throw new ConfinedWriteError(`${rel} was created by someone else after this change was prepared; nothing was written. Read it and redo the change.`);
    if (code === "ENOENT") throw new ConfinedWriteError(`${rel} was removed after this change was prepared; nothing was written. Read it and redo the change.`);
    if (code === "ELOOP") throw new ConfinedWriteError(`${rel} became a symlink after this change was prepared; not followed, nothing was written`);
    if (code === "ENXIO" || code === "EOPNOTSUPP") throw new ConfinedWriteError(`${rel} is not a regular file (a socket or FIFO); nothing was written`);
    throw error;
  }
  let removeStray: string | undefined;
  let original: Uint8Array = new Uint8Array();
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new ConfinedWriteError(`${rel} is ${specialFileKind(info) ?? "not a regular file"}; nothing was written`);
    if (!(await isAt(handle, target, info))) {
      // A directory above it was swapped for a symlink between the walk and the open.
      if (creating) removeStray = descriptorPath(handle);
      throw new ConfinedWriteError(`${rel} resolved outside its approved place while it was being opened (a directory was replaced by a symlink); nothing was written`);
    }
    if (info.nlink > Math.max(1, plan.approvedLinks)) {
      throw new ConfinedWriteError(`${rel} now has ${info.nlink} hard links (another name may be outside the workspace); nothing was written. Ask the user before writing it.`);
    }
    if (!creating) {
      const current = Buffer.alloc(info.size);
      let filled = 0;
      while (filled < info.size) {
        const { bytesRead } = await handle.read(current, filled, info.size - filled, filled);
        if (bytesRead === 0) break;
        filled += bytesRead;
      }
      const held = current.subarray(0, filled);
      if (typeof plan.before === "string" ? held.toString("utf8") !== plan.before : !held.equals(asBytes(plan.before ?? ""))) {
        throw new ConfinedWriteError(`${rel} changed on disk after this change was prepared; nothing was written. Read it again and redo the change.`);
      }
      original = held;
    }
    // The umask would narrow a restored file's permissions: set exactly what it had.
    if (creating && plan.mode !== undefined) await handle.chmod(plan.mode);
    // Written over the old bytes, then cut to length (not truncated first): when the disk fills
    // halfway, the old bytes go back in the space they held, so the file is never left cut short.
    const data = asBytes(plan.after);
    try {
      await writeAll(handle, data);
      if (!creating) await handle.truncate(data.length);
    } catch (error) {
      if (creating) {
        removeStray = target;
        throw new ConfinedWriteError(`${rel} could not be written (${describeError(error)}); nothing was kept`);
      }
      const restored = await writeAll(handle, original)
        .then(() => handle.truncate(original.length))
        .then(() => true, () => false);
      throw new ConfinedWriteError(
        `${rel} could not be written (${describeError(error)}); ${restored ? "it was put back as it was" : "it could not be put back: valarmind undo restores it"}`,
      );
    }
  } finally {
    await handle.close();
    if (removeStray !== undefined) await unlink(removeStray).catch(() => undefined);
  }
}

async function writeAll(handle: FileHandle, data: Uint8Array): Promise<void> {
  let written = 0;
  while (written < data.length) written += (await handle.write(data, written, data.length - written, written)).bytesWritten;
}

/**
 * Removes the regular file `rel` (workspace-relative, symlink-free) if it still holds `expected`,
 * opened and checked like a write (no symlinked parent or file, not moved): what undo does to a
 * file a turn created. Throws ConfinedWriteError (nothing removed) when anything differs.
 */
export async function removeConfined(rootReal: string, rel: string, expected: Uint8Array): Promise<void> {
  let dir = rootReal;
  const parts = rel.split("/");
  const name = parts.pop() ?? "";
  for (const part of parts) {
    dir = join(dir, part);
    const info = await lstat(dir).catch(() => undefined);
    if (!info?.isDirectory() || info.isSymbolicLink()) throw new ConfinedWriteError(`${rel}: ${part}/ is no longer a plain directory; nothing was removed`);
  }
  const target = join(dir, name);
  const read = await readConfined(target, rel, expected.byteLength);
  if (!read.ok && read.reason !== "too_large") throw new ConfinedWriteError(`${read.problem}; nothing was removed`);
  if (!read.ok || !read.bytes.equals(Buffer.from(expected))) throw new ConfinedWriteError(`${rel} changed on disk while it was being removed; nothing was removed`);
  await unlink(target);
}

/** Whether `abs` exists as anything (for prepare: "create" or "overwrite"). */
export async function exists(abs: string): Promise<boolean> {
  try {
    await stat(abs);
    return true;
  } catch {
    return false;
  }
}
