/**
 * StateStore: the only reader and writer of `.valarmind/memory/state.json`.
 * - read: never writes. Validates; a missing file is the empty state; an older file is migrated in
 *   memory; an unparsable or invalid file is left where it is and reported (`source: "invalid"`,
 *   a notice, and `problem` for read-only commands that must refuse to go on).
 * - recover (chat start) and update: an unparsable or invalid file is never overwritten: it is
 *   renamed to `state.json.corrupt-<time>` (under the lock), a notice says where it went, and a
 *   fresh state starts.
 * - update: takes the inter-process lock, re-reads, applies a pure op, validates, stamps
 *   `updated_at`, writes atomically.
 * - a file from a newer valarmind is refused with a UsageError (exit 2), never downgraded.
 * - secrets never reach the file: every string of a state about to be written is redacted (before
 *   validation, so the file stays schema-valid), and the store hands back the state as written.
 */
import { nonRegularFile } from "../config/non-regular-file.ts";
import { lstat, readdir, readFile, rename, rm, stat } from "node:fs/promises";
import { basename, join } from "node:path";
import type { WorkspacePaths } from "../config/paths.ts";
import { ensureValarmindDir } from "../config/valarmind-dir.ts";
import { describeError, UsageError, ValarmindError } from "../errors.ts";
import { errnoCode, fileSystemFailure } from "./fs-failure.ts";
import { redactSecrets, redactSecretsInJson } from "../secrets/redact-secrets.ts";
import { writeFileAtomic } from "./atomic-write.ts";
import { acquireLock, type LockOptions } from "./lock.ts";
import { replaceLoneSurrogates } from "./lone-surrogates.ts";
import { migrateState, STATE_MIGRATIONS, type JsonDocument, type Migration } from "./migrations.ts";
import type { OpResult } from "./ops.ts";
import { emptyState, STATE_SCHEMA_VERSION } from "./empty-state.ts";
import type { WorkingState } from "./schema.ts";
import { validateState } from "./validate.ts";

export interface ReadResult {
  state: WorkingState;
  /**
   * `file`: read as is; `migrated`: an older file upgraded in memory; `missing`; `invalid`: a bad
   * file, left in place (the state is empty); `recovered`: a bad file was moved aside.
   */
  source: "file" | "migrated" | "missing" | "invalid" | "recovered";
  /** True when the server was unreachable and this is the last local copy (a notice says so). */
  stale?: boolean;
  /** Things the user must be told (a file moved aside or left invalid, a migration, a repair). */
  notices: string[];
  /** When `source` is `invalid`: what is wrong with the file, for a command that refuses to go on. */
  problem?: string;
  /** The exact bytes read, when the file existed and was valid (used to detect a stale state.toon). */
  raw?: string;
}

export interface UpdateResult {
  state: WorkingState;
  change: string;
  /** False when the op changed nothing, so the file was left alone. */
  written: boolean;
  notices: string[];
}

export type StateMutation = (state: WorkingState) => OpResult | WorkingState;

/**
 * Where the working state lives: `FileStateStore` (below, the default) or the Redis store
 * (src/store/redis-state-store.ts); `createStateStore` (src/store/create-state-store.ts) picks one
 * from the settings. Both keep the same guarantees: reads never write the state, a bad state is
 * kept aside (never deleted), every change is locked, validated, redacted and stamped.
 */
export interface StateStore {
  /** Where the state is, for messages: a file path, or a Redis URL (without credentials) and key. */
  readonly location: string;
  read(): Promise<ReadResult>;
  recover(): Promise<ReadResult>;
  update(mutate: StateMutation): Promise<UpdateResult>;
  ensure(): Promise<{ created: boolean; notices: string[] }>;
}

export interface StateStoreOptions {
  clock?: () => Date;
  lock?: LockOptions;
  migrations?: readonly Migration[];
}

export type Loaded =
  | { kind: "ok"; state: WorkingState; raw: string; migrated: string[]; repaired: string[] }
  | { kind: "missing" }
  | { kind: "bad"; raw: string; reason: string };

export function serializeState(state: WorkingState): string {
  return `${JSON.stringify(state, null, 2)}\n`;
}

export function corruptStamp(date: Date): string {
  return date.toISOString().replace(/:/g, "-").replace(".", "-");
}

export class FileStateStore implements StateStore {
  readonly paths: WorkspacePaths;
  readonly location: string;
  private readonly clock: () => Date;
  private readonly lockOptions: LockOptions;
  private readonly migrations: readonly Migration[];

  constructor(paths: WorkspacePaths, options: StateStoreOptions = {}) {
    this.paths = paths;
    this.location = paths.stateJson;
    this.clock = options.clock ?? (() => new Date());
    this.lockOptions = options.lock ?? {};
    this.migrations = options.migrations ?? STATE_MIGRATIONS;
  }

  /** Reads the state without writing anything, whatever shape the file is in. */
  async read(): Promise<ReadResult> {
    const loaded = await this.load();
    if (loaded.kind === "ok") return this.readOk(loaded);
    if (loaded.kind === "missing") return { state: emptyState(this.clock()), source: "missing", notices: [] };
    const problem = `${this.paths.stateJson} is ${loaded.reason}`;
    const notice = `${problem}\n  It was left as it is and an empty state is used. Fix it, or make any change (valarmind state …, valarmind chat) to keep it aside as state.json.corrupt-<time> and start fresh.`;
    return { state: emptyState(this.clock()), source: "invalid", notices: [notice], problem };
  }

  /**
   * Like read, but a bad file is moved aside (under the lock, and only if it is still the same bad
   * file) so that a fresh state can start: for `chat`, which must tell the user before the model
   * works from an empty state.
   */
  async recover(): Promise<ReadResult> {
    const loaded = await this.load();
    if (loaded.kind !== "bad") return loaded.kind === "ok" ? this.readOk(loaded) : { state: emptyState(this.clock()), source: "missing", notices: [] };
    ensureValarmindDir(this.paths, this.paths.memoryDir);
    const lock = await acquireLock(this.paths.stateJson, this.lockOptions);
    try {
      const again = await this.load();
      if (again.kind === "ok") return this.readOk(again);
      if (again.kind === "missing") return { state: emptyState(this.clock()), source: "missing", notices: [] };
      const notice = await this.moveAside(again);
      return { state: emptyState(this.clock()), source: "recovered", notices: [notice] };
    } finally {
      await lock.release();
    }
  }

  private readOk(loaded: Extract<Loaded, { kind: "ok" }>): ReadResult {
    const notices = [
      ...loaded.migrated.map((step) => `${this.paths.stateJson}: migrated in memory (${step}); the next change writes it`),
      ...loaded.repaired.map((where) => `${this.paths.stateJson}: ${where}: a lone UTF-16 surrogate (not text) is read as U+FFFD; the next change writes it so (fix the text there by hand to keep the original character)`),
    ];
    return { state: loaded.state, source: loaded.migrated.length > 0 ? "migrated" : "file", notices, raw: loaded.raw };
  }

  /** Applies `mutate` to the current state under the lock and writes the result atomically. */
  async update(mutate: StateMutation): Promise<UpdateResult> {
    ensureValarmindDir(this.paths, this.paths.memoryDir);
    const lock = await acquireLock(this.paths.stateJson, this.lockOptions);
    try {
      await this.removeLeftoverTemps();
      const notices: string[] = [];
      const loaded = await this.load();
      let current: WorkingState;
      if (loaded.kind === "ok") {
        current = loaded.state;
        for (const step of loaded.migrated) notices.push(`${this.paths.stateJson}: migrated (${step})`);
        for (const where of loaded.repaired) notices.push(`${this.paths.stateJson}: ${where}: a lone UTF-16 surrogate (not text) was written as U+FFFD`);
      } else {
        current = emptyState(this.clock());
      }
      let result: ReturnType<StateMutation>;
      try {
        result = mutate(current);
      } catch (error) {
        // The change failed: an invalid file stays where it is, and the error says it is invalid
        // (moved aside first, the notice saying so was lost with the failed change).
        if (loaded.kind !== "bad" || !(error instanceof ValarmindError)) throw error;
        throw new ValarmindError(`${error.message}; and ${this.paths.stateJson} is not a valid working state (${loaded.reason}), so it was read as empty and left as it is`, {
          exitCode: error.exitCode,
          hint: `Fix ${this.paths.stateJson} ('valarmind state show' says what is wrong), or run a change that does not need its contents.`,
          cause: error,
        });
      }
      if (loaded.kind === "bad") notices.push(await this.moveAside(loaded));
      const { state, change } = "change" in result ? result : { state: result, change: "state replaced" };
      const mustWrite = state !== current || loaded.kind !== "ok" || loaded.migrated.length > 0 || loaded.repaired.length > 0;
      if (!mustWrite) return { state, change, written: false, notices };
      const stamped = stampForWrite(state, this.clock(), this.paths.stateJson);
      const told = holdsSecret(state) ? `${redactSecrets(change)}\n  (what looked like a secret was written as [redacted:…]; ${this.paths.stateJson} never holds one)` : change;
      await writeFileAtomic(this.paths.stateJson, serializeState(stamped), () => {
        if (lock.compromised()) {
          throw new ValarmindError(`lost the lock on ${this.paths.stateJson} while writing; nothing was written`, {
            hint: "Another valarmind process took over after this one stalled. Retry the command.",
          });
        }
      });
      return { state: stamped, change: told, written: true, notices };
    } finally {
      await lock.release();
    }
  }

  /** Creates the empty state if the file is missing; leaves an existing valid file untouched. */
  async ensure(): Promise<{ created: boolean; notices: string[] }> {
    const result = await this.update((s) => s);
    return { created: result.written, notices: result.notices };
  }

  private async load(): Promise<Loaded> {
    const file = this.paths.stateJson;
    let raw: string;
    try {
      // A FIFO, socket or device shipped in its place would block the read forever (or never end).
      // lstat: a link would show (and send the model) whatever file it points to, outside the workspace too.
      const info = await lstat(file);
      // (A directory fails the read below with its own clear error.)
      const special = info.isDirectory() ? undefined : nonRegularFile(info);
      if (special !== undefined) return { kind: "bad", raw: "", reason: `not a regular file (${special}), so it was not read` };
      raw = await readFile(file, "utf8");
    } catch (error) {
      if ((error as { code?: unknown }).code === "ENOENT") return { kind: "missing" };
      if (errnoCode(error) === "ENOTDIR") {
        throw new ValarmindError(`cannot read ${file}: ${this.paths.dir} (or ${this.paths.memoryDir}) is not a directory`, {
          hint: `valarmind keeps its files in the directory ${this.paths.dir}; move whatever is there aside, then run 'valarmind init'.`,
          cause: error,
        });
      }
      throw fileSystemFailure(error, "read", file) ?? new ValarmindError(`cannot read ${file}: ${describeError(error)}`, { hint: "Check the file's permissions.", cause: error });
    }
    return parseStateText(raw, file, this.migrations);
  }

  private async moveAside(bad: { raw: string; reason: string }): Promise<string> {
    const file = this.paths.stateJson;
    const base = `${file}.corrupt-${corruptStamp(this.clock())}`;
    let target = base;
    for (let n = 2; await exists(target); n++) target = `${base}-${n}`;
    await rename(file, target);
    return `${file} was ${bad.reason}\n  It was kept as ${target}; a fresh state starts. Copy back what you need from it with 'valarmind state …' commands.`;
  }

  /** Temp files left by a writer killed before its rename. Safe to remove: we hold the lock. */
  private async removeLeftoverTemps(): Promise<void> {
    const prefix = `${basename(this.paths.stateJson)}.tmp-`;
    const names = await readdir(this.paths.memoryDir);
    // Regular files only: a directory of that name (a clone can ship one) made every change fail.
    const leftovers = await Promise.all(
      names.filter((n) => n.startsWith(prefix)).map(async (n) => ((await lstat(join(this.paths.memoryDir, n)).catch(() => undefined))?.isFile() === true ? n : undefined)),
    );
    await Promise.all(leftovers.flatMap((n) => (n === undefined ? [] : [rm(join(this.paths.memoryDir, n), { force: true })])));
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (error) {
    if ((error as { code?: unknown }).code === "ENOENT") return false;
    throw error;
  }
}

/** Parses, migrates and validates a stored state; `label` names it in messages (a file, a Redis key). */
/** Deeper than any valid state (the schema nests 4 levels); checked before anything walks the document. */
const MAX_STATE_DEPTH = 64;

/** Whether `value` nests arrays or objects more than `max` levels deep (iterative: no stack to overflow). */
function nestingBeyond(value: unknown, max: number): boolean {
  const stack: Array<{ value: unknown; depth: number }> = [{ value, depth: 0 }];
  while (stack.length > 0) {
    const next = stack.pop();
    if (!next || typeof next.value !== "object" || next.value === null) continue;
    if (next.depth >= max) return true;
    for (const child of Object.values(next.value)) if (typeof child === "object" && child !== null) stack.push({ value: child, depth: next.depth + 1 });
  }
  return false;
}

export function parseStateText(raw: string, file: string, migrations: readonly Migration[] = STATE_MIGRATIONS): Loaded {
  let parsed: unknown;
  try {
    // Editors on Windows may add a byte-order mark; it is not part of the JSON.
    parsed = JSON.parse(raw.charCodeAt(0) === 0xfeff ? raw.slice(1) : raw);
  } catch (error) {
    return { kind: "bad", raw, reason: `not valid JSON (${describeError(error)})` };
  }
  // The schema is a few levels deep; a document nested far deeper would overflow the walks below.
  const depth = nestingBeyond(parsed, MAX_STATE_DEPTH);
  if (depth) return { kind: "bad", raw, reason: `nested deeper than a state file can be (over ${MAX_STATE_DEPTH} levels)` };
  const surrogates = replaceLoneSurrogates(parsed);
  parsed = surrogates.value;
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    return { kind: "bad", raw, reason: "not a JSON object" };
  }
  const outcome = migrateState(parsed as JsonDocument, migrations);
  if (outcome.kind === "newer") {
    throw new UsageError(
      `${file} was written by a newer valarmind (schema_version ${outcome.version}; this one reads up to ${STATE_SCHEMA_VERSION})`,
      { hint: `Upgrade valarmind to read it. ${file} was left untouched.` },
    );
  }
  if (outcome.kind === "unreadable") return { kind: "bad", raw, reason: outcome.reason };
  const checked = validateState(outcome.doc, file);
  if (!checked.ok) return { kind: "bad", raw, reason: `invalid:\n  ${checked.errors.join("\n  ")}` };
  return { kind: "ok", state: checked.state, raw, migrated: outcome.kind === "migrated" ? outcome.steps : [], repaired: surrogates.found };
}

/** Every string redacted, convention names too (they are object keys, which the JSON redaction leaves). */
function redactState(state: WorkingState): WorkingState {
  const conventions = Object.fromEntries(Object.entries(state.conventions).map(([name, rule]) => [redactSecrets(name), rule]));
  return redactSecretsInJson({ ...state, conventions });
}

/** Whether writing `state` redacts something in it: the change line then says so (it showed the token). */
function holdsSecret(state: WorkingState): boolean {
  return JSON.stringify(redactState(state)) !== JSON.stringify(state);
}

/** Stamps, redacts and validates a state about to be written; an invalid one is a bug and is refused. */
export function stampForWrite(state: WorkingState, at: Date, label: string): WorkingState {
  const stamped: WorkingState = redactState({ ...state, schema_version: STATE_SCHEMA_VERSION, updated_at: at.toISOString() });
  const checked = validateState(stamped, label);
  if (!checked.ok) {
    throw new ValarmindError(`refusing to write an invalid state (nothing was written):\n  ${checked.errors.join("\n  ")}`, {
      hint: "This is a bug in the change that was requested; please report it with the command you ran.",
    });
  }
  return stamped;
}
