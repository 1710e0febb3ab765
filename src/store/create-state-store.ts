/**
 * Picks the working state's store from the settings: `store` ("file", the default, or a Redis
 * URL) and `projectId`. Only the user may choose a shared store (their config file or
 * VALARMIND_STORE): a repository's `.valarmind/config.json` pointing the user's agent at its own
 * server would read and poison the state, so its `store` is ignored. A project file's `projectId`
 * applies only in a trusted folder, like every setting a repository ships.
 * The Redis store is loaded lazily, so the file store costs nothing more.
 */
import type { WorkspacePaths } from "../config/paths.ts";
import type { Settings } from "../config/settings-schema.ts";
import { storedTrust } from "../config/folder-trust.ts";
import { projectConfigPath, readLayer, userConfigPath } from "../config/load-settings.ts";
import { UsageError } from "../errors.ts";
import { displayRedisUrl } from "./redis-connection.ts";
import { withoutCredentials } from "../secrets/url-credentials.ts";
import { FileStateStore, type ReadResult, type StateMutation, type StateStore, type UpdateResult } from "../state/store.ts";
import type { RedisStateStore, RedisStateStoreOptions } from "./redis-state-store.ts";

export type StoreChoice = { kind: "file" } | { kind: "redis"; url: string; projectId?: string };

const STORE_VALUE = /^(file|rediss?:\/\/\S+)$/;

/** The store the user chose, and the project id (user's, or a trusted project's). */
export function resolveStoreChoice(root: string, env: Readonly<Record<string, string | undefined>> = process.env): StoreChoice {
  const user = readLayer(userConfigPath());
  const fromEnv = env.VALARMIND_STORE;
  if (fromEnv !== undefined && fromEnv !== "" && !STORE_VALUE.test(fromEnv)) {
    throw new UsageError(`environment variable VALARMIND_STORE=${JSON.stringify(withoutCredentials(fromEnv))} is neither "file" nor a redis:// or rediss:// URL`, {
      hint: "Set VALARMIND_STORE=file or VALARMIND_STORE=redis://host:6379/0, or unset it.",
    });
  }
  const store = fromEnv || user.store || "file";
  if (store === "file") return { kind: "file" };
  let projectId = user.projectId;
  if (storedTrust(root) === "trusted") projectId = readLayer(projectConfigPath(root)).projectId ?? projectId;
  return storeChoiceFromSettings({ store, ...(projectId !== undefined && { projectId }) });
}

/**
 * The same choice from settings a run already resolved (flags, environment, user config, and a
 * project file only as far as the run trusts it: `chat --trust` included). `store` never comes
 * from a project file (load-settings.ts drops it), so only the project id can.
 */
export function storeChoiceFromSettings(settings: Pick<Settings, "store" | "projectId">): StoreChoice {
  if (settings.store === "file") return { kind: "file" };
  return { kind: "redis", url: settings.store, ...(settings.projectId !== undefined && { projectId: settings.projectId }) };
}

/** A store that loads the Redis implementation on first use (keeps `compact` and `--version` fast). */
class LazyRedisStateStore implements StateStore {
  private loaded: Promise<RedisStateStore> | undefined;
  constructor(
    private readonly paths: WorkspacePaths,
    private readonly url: string,
    private readonly options: RedisStateStoreOptions,
  ) {}
  get location(): string {
    return displayRedisUrl(this.url);
  }
  store(): Promise<RedisStateStore> {
    this.loaded ??= import("./redis-state-store.ts").then(({ RedisStateStore }) => new RedisStateStore(this.paths, this.url, this.options));
    return this.loaded;
  }
  async read(): Promise<ReadResult> {
    return (await this.store()).read();
  }
  async recover(): Promise<ReadResult> {
    return (await this.store()).recover();
  }
  async update(mutate: StateMutation): Promise<UpdateResult> {
    return (await this.store()).update(mutate);
  }
  async ensure(): Promise<{ created: boolean; notices: string[] }> {
    return (await this.store()).ensure();
  }
}

/** The workspace's state store as the settings choose it. */
export function createStateStore(paths: WorkspacePaths, choice: StoreChoice = resolveStoreChoice(paths.root)): StateStore {
  if (choice.kind === "file") return new FileStateStore(paths);
  return new LazyRedisStateStore(paths, choice.url, choice.projectId === undefined ? {} : { projectId: choice.projectId });
}
