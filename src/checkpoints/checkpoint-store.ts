/**
 * Where checkpoints live and how a file's state is read (ADR 0081):
 *
 *   .valarmind/checkpoints/<session>/<turn>/checkpoint.json   which files, before and after (checkpoint-schema.ts)
 *   .valarmind/checkpoints/<session>/blobs/<sha256>            their contents, verbatim
 *
 * Directories are 0700 and files 0600 like the rest of `.valarmind/`. Blobs are the workspace's
 * own bytes, kept unredacted so undo gives back exactly what was there (docs/security.md).
 */
import { createHash } from "node:crypto";
import { open, readFile, rename, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import type { WorkspacePaths } from "../config/paths.ts";
import { ensureValarmindDir, PRIVATE_FILE_MODE } from "../config/valarmind-dir.ts";
import { describeError, ValarmindError } from "../errors.ts";
import { tempPathFor, writeFileAtomic } from "../state/atomic-write.ts";
import { confinePath, PathEscapeError } from "../tools/confine.ts";
import { readConfined } from "../tools/confined-file.ts";
import { errnoCode } from "../errors.ts";
import { checkCheckpoint, CHECKPOINT_VERSION, type Checkpoint, type FileState } from "./checkpoint-schema.ts";

/** Larger than any file a tool writes (edit_file and write_file stop at 5 MB). */
export const CHECKPOINT_MAX_BYTES = 16 * 1024 * 1024;

export type CurrentFile =
  | { kind: "missing"; state: FileState }
  | { kind: "file"; bytes: Buffer; state: Extract<FileState, { exists: true }> }
  /** Something undo must not touch: a directory, a symlink, a path that leaves the workspace or enters .git/; or a file grown past what undo reads. */
  | { kind: "unusable"; problem: string; hint?: string };

export function sha256(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/**
 * The file at `rel` as a write would meet it: confined like every write (no `..`, no symlink out,
 * not in `.git/` or `.valarmind/`) and opened without following a symlink.
 */
export async function readCurrentFile(root: string, rel: string): Promise<CurrentFile> {
  try {
    const confined = confinePath(root, rel, { forWrite: true });
    if (confined.rel !== rel) return { kind: "unusable", problem: `${rel} now resolves through a symlink to ${confined.rel}` };
  } catch (error) {
    if (error instanceof PathEscapeError) return { kind: "unusable", problem: error.message };
    throw error;
  }
  const read = await readConfined(join(root, rel), rel, CHECKPOINT_MAX_BYTES);
  if (!read.ok && read.reason === "too_large") {
    // Bigger than any state a checkpoint holds: changed since the turn, and too big to hold in memory to put back.
    return {
      kind: "unusable",
      problem: `${rel} was changed since and is now ${read.size ?? "over"} bytes, more than undo handles (${CHECKPOINT_MAX_BYTES} bytes)`,
      hint: `Move or remove ${rel} yourself (keep a copy if you need it), then try again: undo then restores it.`,
    };
  }
  if (!read.ok) return read.reason === "missing" ? { kind: "missing", state: { exists: false } } : { kind: "unusable", problem: read.problem };
  return { kind: "file", bytes: read.bytes, state: { exists: true, sha256: sha256(read.bytes), size: read.bytes.byteLength, mode: read.mode } };
}

export class CheckpointStore {
  readonly dir: string;

  constructor(
    private readonly paths: WorkspacePaths,
    readonly sessionId: string,
  ) {
    this.dir = join(checkpointsDir(paths), sessionId);
  }

  turnDir(turn: number): string {
    return join(this.dir, String(turn));
  }

  file(turn: number): string {
    return join(this.turnDir(turn), "checkpoint.json");
  }

  private blobFile(hash: string): string {
    return join(this.dir, "blobs", hash);
  }

  /** The turn's checkpoint; undefined when the turn wrote nothing. A damaged file is an error naming it. */
  async read(turn: number): Promise<Checkpoint | undefined> {
    const file = this.file(turn);
    let text: string;
    try {
      text = await readFile(file, "utf8");
    } catch (error) {
      if (errnoCode(error) === "ENOENT") return undefined;
      throw new ValarmindError(`cannot read the checkpoint ${file}: ${describeError(error)}`, { cause: error });
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw new ValarmindError(`the checkpoint ${file} is damaged (${describeError(error)}); turn ${turn} cannot be undone or redone`, { cause: error });
    }
    if (!checkCheckpoint.Check(value)) {
      const first = checkCheckpoint.Errors(value).First();
      const version = typeof value === "object" && value !== null && "version" in value ? value.version : undefined;
      const why = typeof version === "number" && version > CHECKPOINT_VERSION ? `written by a newer valarmind (version ${version})` : `${first?.path ?? ""} ${first?.message ?? "invalid"}`;
      throw new ValarmindError(`the checkpoint ${file} cannot be used: ${why}; turn ${turn} cannot be undone or redone`);
    }
    return value;
  }

  /** Written atomically: a crash leaves the previous version or this one. */
  async write(checkpoint: Checkpoint): Promise<void> {
    const dir = this.turnDir(checkpoint.turn);
    if (checkpoint.files.length === 0 && checkpoint.commands.length === 0) {
      await rm(dir, { recursive: true, force: true });
      return;
    }
    ensureValarmindDir(this.paths, dir);
    await writeFileAtomic(this.file(checkpoint.turn), `${JSON.stringify(checkpoint, null, 2)}\n`);
  }

  /** Keeps `bytes` under their hash (once); returns the hash. */
  async putBlob(bytes: Uint8Array): Promise<string> {
    const hash = sha256(bytes);
    const target = this.blobFile(hash);
    if (await stat(target).then(() => true, () => false)) return hash;
    ensureValarmindDir(this.paths, join(this.dir, "blobs"));
    const temp = tempPathFor(target);
    try {
      const handle = await open(temp, "wx", PRIVATE_FILE_MODE);
      try {
        await handle.writeFile(bytes);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temp, target);
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
    return hash;
  }

  /** A blob's bytes, checked against its hash. */
  async getBlob(hash: string, turn: number): Promise<Buffer> {
    const file = this.blobFile(hash);
    const bytes = await readFile(file).catch((error: unknown) => {
      throw new ValarmindError(`the checkpoint of turn ${turn} lacks ${file} (${describeError(error)}); it cannot be restored`, { cause: error });
    });
    if (sha256(bytes) !== hash) throw new ValarmindError(`${file} is damaged (its content does not match its name); the checkpoint of turn ${turn} cannot be restored`);
    return bytes;
  }
}

export function checkpointsDir(paths: WorkspacePaths): string {
  return join(paths.dir, "checkpoints");
}

export function emptyCheckpoint(sessionId: string, turn: number): Checkpoint {
  return { version: CHECKPOINT_VERSION, session: sessionId, turn, files: [], commands: [] };
}
