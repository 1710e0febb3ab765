/**
 * The working state on a Valkey/Redis server, shared by every clone and worktree of a project
 * (keys namespaced by project-identity.ts). Same guarantees as the file store:
 * - read never changes the state; a bad value is reported and left (`source: "invalid"`);
 * - recover and update keep a bad value aside as `…:corrupt:<time>` (RENAME: kept, not deleted)
 *   and say so in a notice;
 * - update holds the distributed lock (redis-lock.ts), re-reads, applies a pure op, stamps,
 *   redacts, validates, and writes with compare-and-set on the version it read, so a writer whose
 *   lock expired mid-change cannot overwrite a newer state;
 * - every state read or written is also written to `.valarmind/memory/state.json`, the local copy:
 *   when the server cannot be reached, reads use it (marked stale in a notice) and writes fail
 *   (exit 1) without touching it; when the server holds no state for the project (a workspace
 *   switched from the file store, a server that lost its data), the shared state starts from it;
 * - a command the server refuses (ACL, maxmemory, a replica) is an error naming the server and key.
 * Keys: `valarmind:{<namespace>}:state` (the JSON text), `:version` (an integer, +1 per write),
 * `:lock`, `:corrupt:<time>`. The braces keep them in one Redis Cluster slot for the scripts.
 */
import type { RedisClient } from "bun";
import { readFile } from "node:fs/promises";
import type { WorkspacePaths } from "../config/paths.ts";
import { ensureValarmindDir } from "../config/valarmind-dir.ts";
import { describeError, ValarmindError } from "../errors.ts";
import { writeFileAtomic } from "../state/atomic-write.ts";
import { emptyState } from "../state/empty-state.ts";
import { STATE_MIGRATIONS, type Migration } from "../state/migrations.ts";
import type { WorkingState } from "../state/schema.ts";
import {
  corruptStamp,
  FileStateStore,
  parseStateText,
  serializeState,
  stampForWrite,
  type Loaded,
  type ReadResult,
  type StateMutation,
  type StateStore,
  type UpdateResult,
} from "../state/store.ts";
import { trace } from "../trace.ts";
import { resolveProjectIdentity } from "./project-identity.ts";
import { connectRedis, displayRedisUrl, isConnectionError, StoreUnreachableError } from "./redis-connection.ts";
import { acquireRedisLock, type RedisLockOptions } from "./redis-lock.ts";

export interface RedisStateStoreOptions {
  /** The `projectId` setting; without it the keys follow git remote origin. */
  projectId?: string;
  clock?: () => Date;
  lock?: RedisLockOptions;
  migrations?: readonly Migration[];
  /** False for `store push/pull`, where state.json is the other side, not this store's copy. */
  keepLocalCopy?: boolean;
}

export interface StateKeys {
  prefix: string;
  state: string;
  version: string;
  lock: string;
}

/** What the server holds: the key's type, its text when a string, and the version. */
interface Fetched {
  type: string;
  raw: string;
  version: number;
}

const FETCH_SCRIPT = `local t = redis.call('TYPE', KEYS[1])['ok']
local v = redis.call('GET', KEYS[2]) or '0'
if t == 'string' then return {t, redis.call('GET', KEYS[1]), v} end
return {t, '', v}`;

/** Writes only if the version is still the one read: the compare-and-set behind every change. */
const WRITE_IF_VERSION_SCRIPT = `local v = redis.call('GET', KEYS[2]) or '0'
if v ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
redis.call('SET', KEYS[2], ARGV[3])
return 1`;

export function stateKeys(namespace: string): StateKeys {
  const prefix = `valarmind:{${namespace}}`;
  return { prefix, state: `${prefix}:state`, version: `${prefix}:version`, lock: `${prefix}:lock` };
}

export class RedisStateStore implements StateStore {
  readonly paths: WorkspacePaths;
  readonly url: string;
  private readonly options: RedisStateStoreOptions;
  private readonly clock: () => Date;
  private keysPromise: Promise<StateKeys> | undefined;
  private knownKeys: StateKeys | undefined;

  constructor(paths: WorkspacePaths, url: string, options: RedisStateStoreOptions = {}) {
    this.paths = paths;
    this.url = url;
    this.options = options;
    this.clock = options.clock ?? (() => new Date());
  }

  get location(): string {
    return this.knownKeys ? `${displayRedisUrl(this.url)} key ${this.knownKeys.state}` : displayRedisUrl(this.url);
  }

  /** The keys of this project, resolved once (a missing identity is a usage error). */
  keys(): Promise<StateKeys> {
    this.keysPromise ??= resolveProjectIdentity(this.paths.root, this.options.projectId).then((identity) => {
      this.knownKeys = stateKeys(identity.namespace);
      return this.knownKeys;
    });
    return this.keysPromise;
  }

  /** Reads the shared state; an unreachable server falls back to the local copy, marked stale. */
  async read(): Promise<ReadResult> {
    return this.readWith({ fallback: true, recover: false });
  }

  /** The server's state or an error: never the local copy (for `store pull`). */
  async readFromServer(): Promise<ReadResult> {
    return this.readWith({ fallback: false, recover: false });
  }

  /** Like read, but a bad value is kept aside under the lock and a fresh state starts (chat). */
  async recover(): Promise<ReadResult> {
    return this.readWith({ fallback: true, recover: true });
  }

  private async readWith(mode: { fallback: boolean; recover: boolean }): Promise<ReadResult> {
    const keys = await this.keys();
    const unchanged = "nothing was read or changed";
    let client: RedisClient;
    try {
      client = await connectRedis(this.url, unchanged);
    } catch (error) {
      if (mode.fallback && error instanceof StoreUnreachableError) return this.readLocalCopy(error);
      throw error;
    }
    try {
      const loaded = this.parse(await this.fetch(client, keys), keys);
      if (loaded.kind === "ok") {
        const read = this.readOk(loaded, keys);
        await this.cacheLocally(loaded.raw, read.notices);
        return read;
      }
      if (loaded.kind === "missing") return this.missingOnServer(keys);
      if (!mode.recover) {
        const problem = `${displayRedisUrl(this.url)}: the value of ${keys.state} is ${loaded.reason}`;
        const notice = `${problem}\n  It was left as it is and an empty state is used. Fix it, or make any change (valarmind state …, valarmind chat) to keep it aside as ${keys.prefix}:corrupt:<time> and start fresh.`;
        return { state: emptyState(this.clock()), source: "invalid", notices: [notice], problem };
      }
      const lock = await acquireRedisLock(client, keys.lock, displayRedisUrl(this.url), this.options.lock);
      try {
        const again = this.parse(await this.fetch(client, keys), keys);
        if (again.kind === "ok") return this.readOk(again, keys);
        if (again.kind === "missing") return this.missingOnServer(keys);
        return { state: emptyState(this.clock()), source: "recovered", notices: [await this.moveAside(client, keys, again)] };
      } finally {
        await this.release(lock);
      }
    } catch (error) {
      if (isConnectionError(error) && !(error instanceof ValarmindError)) {
        const lost = new StoreUnreachableError(this.url, error, unchanged);
        if (mode.fallback) return this.readLocalCopy(lost);
        throw lost;
      }
      if (!(error instanceof ValarmindError)) throw this.refused(error, keys, unchanged);
      throw error;
    } finally {
      client.close();
    }
  }

  private readOk(loaded: Extract<Loaded, { kind: "ok" }>, keys: StateKeys): ReadResult {
    const notices = [
      ...loaded.migrated.map((step) => `${keys.state}: migrated in memory (${step}); the next change writes it`),
      ...loaded.repaired.map((where) => `${keys.state}: ${where}: a lone UTF-16 surrogate (not text) is read as U+FFFD; the next change writes it so`),
    ];
    return { state: loaded.state, source: loaded.migrated.length > 0 ? "migrated" : "file", notices, raw: loaded.raw };
  }

  /** The server is unreachable: the last local copy, with a notice that it may be out of date. */
  private async readLocalCopy(unreachable: StoreUnreachableError): Promise<ReadResult> {
    const local = await new FileStateStore(this.paths, { migrations: this.options.migrations ?? STATE_MIGRATIONS }).read();
    if (local.source === "missing") {
      throw new StoreUnreachableError(this.url, unreachable.cause, `and there is no local copy at ${this.paths.stateJson} to fall back on`);
    }
    const notice = `the state store ${displayRedisUrl(this.url)} is unreachable (${describeError(unreachable.cause)}); using the last local copy ${this.paths.stateJson}, which may be stale (last synced state from ${local.state.updated_at})`;
    return { ...local, notices: [notice, ...local.notices], stale: true };
  }

  /** Applies `mutate` under the distributed lock and writes with compare-and-set on the version. */
  async update(mutate: StateMutation): Promise<UpdateResult> {
    const keys = await this.keys();
    const unchanged = `nothing was changed, on the server or in the local copy ${this.paths.stateJson}`;
    const where = displayRedisUrl(this.url);
    const client = await connectRedis(this.url, unchanged);
    let sent = false;
    try {
      const lock = await acquireRedisLock(client, keys.lock, where, this.options.lock);
      try {
        const notices: string[] = [];
        const fetched = await this.fetch(client, keys);
        const loaded = this.parse(fetched, keys);
        let current: WorkingState;
        if (loaded.kind === "ok") {
          current = loaded.state;
          for (const step of loaded.migrated) notices.push(`${keys.state}: migrated (${step})`);
          for (const at of loaded.repaired) notices.push(`${keys.state}: ${at}: a lone UTF-16 surrogate (not text) was written as U+FFFD`);
        } else {
          if (loaded.kind === "bad") notices.push(await this.moveAside(client, keys, loaded));
          // Nothing on the server: a workspace switched from the file store, or a server that lost
          // its data. The local copy's state is where the shared one starts, not an empty one.
          const seed = loaded.kind === "missing" ? await this.localSeed() : undefined;
          if (seed) notices.push(`${where} held no state for this project (${keys.state}); it starts from the local copy ${this.paths.stateJson} (last changed ${seed.state.updated_at})`);
          current = seed?.state ?? emptyState(this.clock());
        }
        const result = mutate(current);
        const { state, change } = "change" in result ? result : { state: result, change: "state replaced" };
        const mustWrite = state !== current || loaded.kind !== "ok" || loaded.migrated.length > 0 || loaded.repaired.length > 0;
        if (!mustWrite) {
          if (loaded.kind === "ok") await this.cacheLocally(loaded.raw, notices);
          return { state, change, written: false, notices };
        }
        const stamped = stampForWrite(state, this.clock(), keys.state);
        const text = serializeState(stamped);
        sent = true;
        const written = await client.send("EVAL", [WRITE_IF_VERSION_SCRIPT, "2", keys.state, keys.version, String(fetched.version), text, String(fetched.version + 1)]);
        if (written !== 1) {
          throw new ValarmindError(`the state on ${where} (${keys.state}) changed while this change was being made (its lock had expired); nothing was written`, {
            hint: "Another valarmind wrote after this one stalled past the lock's lifetime. Retry the command.",
          });
        }
        await this.cacheLocally(text, notices);
        return { state: stamped, change, written: true, notices };
      } finally {
        await this.release(lock);
      }
    } catch (error) {
      if (isConnectionError(error) && !(error instanceof ValarmindError)) {
        const what = sent ? `the change may or may not have reached it; the local copy ${this.paths.stateJson} was not changed (check with 'valarmind state show')` : unchanged;
        throw new StoreUnreachableError(this.url, error, what);
      }
      if (!(error instanceof ValarmindError)) throw this.refused(error, keys, sent ? `the change may not have been written; the local copy ${this.paths.stateJson} was not changed (check with 'valarmind state show')` : unchanged);
      throw error;
    } finally {
      client.close();
    }
  }

  async ensure(): Promise<{ created: boolean; notices: string[] }> {
    const result = await this.update((s) => s);
    return { created: result.written, notices: result.notices };
  }

  /** The server answered with an error (ACL NOPERM, OOM under maxmemory, READONLY on a replica, MISCONF). */
  private refused(error: unknown, keys: StateKeys, whatHappened: string): ValarmindError {
    return new ValarmindError(`the state store ${displayRedisUrl(this.url)} refused a command on ${keys.state} (${describeError(error)}); ${whatHappened}`, {
      hint: "Check the server: the user's rights (valarmind runs GET, SET, EVAL, RENAMENX and DEL on its valarmind:* keys), its maxmemory, or whether it is a read-only replica.",
      cause: error,
    });
  }

  /** The local copy's state when it holds a valid one (never for `store push/pull`, where the file is the other side). */
  private async localSeed(): Promise<ReadResult | undefined> {
    if (this.options.keepLocalCopy === false) return undefined;
    const local = await new FileStateStore(this.paths, { migrations: this.options.migrations ?? STATE_MIGRATIONS }).read();
    return local.source === "file" || local.source === "migrated" ? local : undefined;
  }

  /** The server has no state for this project: the local copy if it holds one (the next change writes it there), said in a notice; else none yet. */
  private async missingOnServer(keys: StateKeys): Promise<ReadResult> {
    const seed = await this.localSeed();
    if (!seed) return { state: emptyState(this.clock()), source: "missing", notices: [] };
    const notice = `${displayRedisUrl(this.url)} holds no state for this project (${keys.state}); using the local copy ${this.paths.stateJson} (last changed ${seed.state.updated_at}), which the next change writes to the server`;
    return { ...seed, notices: [notice, ...seed.notices] };
  }

  private async fetch(client: RedisClient, keys: StateKeys): Promise<Fetched> {
    const reply = await client.send("EVAL", [FETCH_SCRIPT, "2", keys.state, keys.version]);
    const [type, raw, version] = Array.isArray(reply) ? reply : [];
    const n = Number(version);
    if (typeof type !== "string" || typeof raw !== "string" || !Number.isSafeInteger(n)) {
      throw new ValarmindError(`unexpected reply from ${displayRedisUrl(this.url)} reading ${keys.state}: ${JSON.stringify(reply)}`, {
        hint: `Check that ${keys.version} holds an integer; valarmind writes it.`,
      });
    }
    return { type, raw, version: n };
  }

  private parse(fetched: Fetched, keys: StateKeys): Loaded {
    if (fetched.type === "none") return { kind: "missing" };
    if (fetched.type !== "string") return { kind: "bad", raw: "", reason: `a Redis ${fetched.type}, not the state's JSON text` };
    return parseStateText(fetched.raw, keys.state, this.options.migrations ?? STATE_MIGRATIONS);
  }

  /** Keeps a bad value as `…:corrupt:<time>` (an atomic RENAME: nothing is deleted) and says where. */
  private async moveAside(client: RedisClient, keys: StateKeys, bad: { reason: string }): Promise<string> {
    const base = `${keys.prefix}:corrupt:${corruptStamp(this.clock())}`;
    let target = base;
    for (let n = 2; (await client.send("RENAMENX", [keys.state, target])) !== 1; n++) target = `${base}-${n}`;
    return `${displayRedisUrl(this.url)}: the value of ${keys.state} was ${bad.reason}\n  It was kept as ${target}; a fresh state starts. Read it with 'redis-cli GET "${target}"' and copy back what you need with 'valarmind state …' commands.`;
  }

  private async release(lock: { release(): Promise<boolean> }): Promise<void> {
    try {
      if (!(await lock.release())) trace("redis store: the lock had expired before its release");
    } catch (error) {
      // The lock expires by itself; a failed release only delays the next writer.
      trace(`redis store: releasing the lock failed: ${describeError(error)}`);
    }
  }

  /** The local copy the offline fallback reads; written only when it differs. */
  private async cacheLocally(text: string, notices: string[]): Promise<void> {
    if (this.options.keepLocalCopy === false) return;
    try {
      const current = await readFile(this.paths.stateJson, "utf8").catch(() => undefined);
      if (current === text) return;
      ensureValarmindDir(this.paths, this.paths.memoryDir);
      await writeFileAtomic(this.paths.stateJson, text);
    } catch (error) {
      const message = `could not update the local copy ${this.paths.stateJson} of the shared state (${describeError(error)}); the server has the state`;
      notices.push(message);
    }
  }
}
