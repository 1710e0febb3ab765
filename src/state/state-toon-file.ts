/**
 * `state.toon`, the derived file: the state's prompt projection as TOON (round trip checked),
 * written atomically and only when it changed. One mechanism for `valarmind compact` and `/compact`.
 * The file is redacted like every file valarmind writes (a state.json from an older valarmind may
 * still hold a secret); the projection handed back is not.
 */
import { lstat, readdir, rm } from "node:fs/promises";
import { hostname } from "node:os";
import { isDeadOwner } from "./lock-owner.ts";
import { basename, dirname, join } from "node:path";
import { ValarmindError } from "../errors.ts";
import { readConfined } from "../tools/confined-file.ts";
import { redactSecrets } from "../secrets/redact-secrets.ts";
import { writeFileAtomic } from "./atomic-write.ts";
import type { WorkingState } from "./schema.ts";
import { encodeStateToon, type StateToon } from "./toon.ts";

export type StateToonStatus = "missing" | "stale" | "fresh";

export interface StateToonFile {
  encoded: StateToon;
  /** How the file on disk compared with the projection before anything was written. */
  status: StateToonStatus;
  written: boolean;
}

export interface SyncOptions {
  maxTokens?: number;
  /** Compare only; write nothing. */
  check?: boolean;
  /** Runs on the projection before anything is written; throw to refuse it. */
  accept?: (encoded: StateToon) => void;
}

/** Encodes `state`; writes `file` unless `check` or it is already up to date. */
export async function syncStateToon(file: string, state: WorkingState, options: SyncOptions = {}): Promise<StateToonFile> {
  const encoded = await encodeStateToon(state, options.maxTokens === undefined ? {} : { maxTokens: options.maxTokens });
  options.accept?.(encoded);
  const text = redactSecrets(`${encoded.toon}\n`);
  const previous = await readPreviousToon(file);
  const status: StateToonStatus = previous === undefined ? "missing" : previous === text ? "fresh" : "stale";
  const written = options.check !== true && status !== "fresh";
  if (written) {
    await writeFileAtomic(file, text);
    await removeDeadWritersTemps(file);
  }
  return { encoded, status, written };
}

/**
 * Temp files of writers killed before their rename (`state.toon.tmp-<pid>-<random>`): removed once
 * their process is gone. A live writer's (another valarmind compacting now) is left alone; regular
 * files only (a directory of that name is not ours to touch).
 */
async function removeDeadWritersTemps(file: string): Promise<void> {
  const dir = dirname(file);
  const prefix = `${basename(file)}.tmp-`;
  const names = await readdir(dir).catch((): string[] => []);
  for (const name of names) {
    const pid = Number(/^(\d+)-/.exec(name.slice(prefix.length))?.[1]);
    if (!name.startsWith(prefix) || !Number.isSafeInteger(pid) || pid === process.pid || !isDeadOwner({ pid, hostname: hostname() })) continue;
    const path = join(dir, name);
    const info = await lstat(path).catch(() => undefined);
    if (info?.isFile() === true) await rm(path, { force: true }).catch(() => undefined);
  }
}


/** More than any projection: a bigger file is not one valarmind wrote. */
const TOON_MAX_BYTES = 1_000_000;

/**
 * The file as it is, for the comparison: never through a symlink, never blocking on a FIFO, never
 * more than TOON_MAX_BYTES (a clone can ship `state.toon` as a link to /dev/zero). Anything but a
 * small regular file counts as stale (the write replaces it); a directory is an error naming it.
 */
async function readPreviousToon(file: string): Promise<string | undefined> {
  const read = await readConfined(file, basename(file), TOON_MAX_BYTES);
  if (read.ok) return read.bytes.toString("utf8");
  if (read.reason === "missing") return undefined;
  if (read.reason === "directory") {
    throw new ValarmindError(`${file} is a directory, not the state.toon valarmind writes; nothing was written`, { hint: "Move or remove that directory, then run the command again." });
  }
  return "";
}
