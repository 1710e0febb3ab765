/**
 * `state.toon`, the derived file: the state's prompt projection as TOON (round trip checked),
 * written atomically and only when it changed. One mechanism for `valarmind compact` and `/compact`.
 * The file is redacted like every file valarmind writes (a state.json from an older valarmind may
 * still hold a secret); the projection handed back is not.
 */
import { readTextIfExists } from "../read-text-if-exists.ts";
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
  const previous = await readTextIfExists(file);
  const status: StateToonStatus = previous === undefined ? "missing" : previous === text ? "fresh" : "stale";
  const written = options.check !== true && status !== "fresh";
  if (written) await writeFileAtomic(file, text);
  return { encoded, status, written };
}
