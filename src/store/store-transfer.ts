/**
 * `valarmind store push` (the local file → the server) and `valarmind store pull` (the server →
 * the local file). The target is checked under its own lock: a target that differs from the
 * source is overwritten only with `--force`, and the refusal lists what would change.
 */
import { userConfigFileShown } from "../config/user-config-dir.ts";
import { findWorkspaceRoot, workspacePaths, type WorkspacePaths } from "../config/paths.ts";
import { UsageError, ValarmindError } from "../errors.ts";
import { emptyState } from "../state/empty-state.ts";
import type { WorkingState } from "../state/schema.ts";
import { FileStateStore, type ReadResult, type StateStore } from "../state/store.ts";
import { resolveStoreChoice } from "./create-state-store.ts";
import { displayRedisUrl } from "./redis-connection.ts";
import { RedisStateStore } from "./redis-state-store.ts";
import { withoutCredentials } from "../secrets/url-credentials.ts";

export interface TransferOptions {
  force: boolean;
  /** The server; default: the configured store. */
  url?: string;
}

const ITEM_LISTS = ["decisions_recent", "tasks_open", "blockers"] as const;

/** What writing `from` over `to` would change, one line per field; empty when they are the same. */
export function describeStateChanges(to: WorkingState, from: WorkingState): string[] {
  const lines: string[] = [];
  for (const key of ["goal", "now"] as const) {
    if (to[key] !== from[key]) lines.push(`${key}: ${JSON.stringify(to[key])} → ${JSON.stringify(from[key])}`);
  }
  for (const key of ITEM_LISTS) {
    const before = new Map<string, string>(to[key].map((item) => [item.id, JSON.stringify(item)]));
    const after = new Map<string, string>(from[key].map((item) => [item.id, JSON.stringify(item)]));
    const added = [...after.keys()].filter((id) => !before.has(id));
    const removed = [...before.keys()].filter((id) => !after.has(id));
    const changed = [...after.keys()].filter((id) => before.has(id) && before.get(id) !== after.get(id));
    const parts = [...added.map((id) => `+${id}`), ...removed.map((id) => `-${id}`), ...changed.map((id) => `~${id}`)];
    if (parts.length > 0) lines.push(`${key}: ${parts.join(" ")}`);
  }
  const names = new Set([...Object.keys(to.conventions), ...Object.keys(from.conventions)]);
  const conventions = [...names].filter((n) => to.conventions[n] !== from.conventions[n]);
  if (conventions.length > 0) lines.push(`conventions: ${conventions.join(", ")}`);
  return lines;
}

function requireReadable(read: ReadResult, what: string): WorkingState {
  if (read.source === "invalid") throw new UsageError(`${what} is invalid; nothing was copied\n  ${read.problem ?? ""}`, { hint: "Fix it first, or run a 'valarmind state …' change there to keep it aside and start fresh." });
  if (read.source === "missing") throw new UsageError(`${what} has no working state; nothing was copied`, { hint: "Copy in the other direction, or start a state with 'valarmind state goal …'." });
  return read.state;
}

/** Copies `source` over `target` under the target's lock; returns the line to print. */
async function copyState(source: WorkingState, target: StateStore, names: { from: string; to: string }, force: boolean): Promise<string> {
  let differences: string[] = [];
  const result = await target.update((current) => {
    differences = describeStateChanges(current, source);
    if (differences.length === 0) return { state: current, change: "" };
    // Decided here, under the target's lock, from what it holds now: a state written since a
    // first look is not "fresh" and is not overwritten without --force.
    const fresh = describeStateChanges(emptyState(new Date()), current).length === 0;
    const newer = current.updated_at > source.updated_at;
    if (!force && !fresh) {
      throw new ValarmindError(
        `${names.to} ${newer ? "is newer than" : "differs from"} ${names.from}; nothing was copied. Copying would change:\n  ${differences.join("\n  ")}`,
        { hint: "Pass --force to overwrite it, or copy in the other direction first." },
      );
    }
    return { state: source, change: "copied" };
  });
  if (!result.written) return `${names.to} already holds the same state as ${names.from}; nothing was copied`;
  return `copied the working state from ${names.from} to ${names.to}:\n  ${differences.length > 0 ? differences.join("\n  ") : "(a fresh target)"}`;
}

function serverStore(paths: WorkspacePaths, options: TransferOptions): RedisStateStore {
  const choice = resolveStoreChoice(paths.root);
  const url = options.url ?? (choice.kind === "redis" ? choice.url : undefined);
  if (options.url !== undefined && !/^rediss?:\/\//.test(options.url)) {
    throw new UsageError(`--url ${JSON.stringify(withoutCredentials(options.url))} is not a Redis URL: it must start with redis:// (or rediss:// for TLS)`, { hint: "For example --url redis://127.0.0.1:6379/0." });
  }
  if (url === undefined || !/^rediss?:\/\//.test(url)) {
    throw new UsageError("no Redis store to copy to or from", { hint: `Pass --url redis://host:6379/0, or set 'store' in ${userConfigFileShown()} or VALARMIND_STORE.` });
  }
  const projectId = choice.kind === "redis" ? choice.projectId : undefined;
  return new RedisStateStore(paths, url, { keepLocalCopy: false, ...(projectId !== undefined && { projectId }) });
}

export async function runStorePush(options: TransferOptions, paths: WorkspacePaths = workspacePaths(findWorkspaceRoot())): Promise<string> {
  const server = serverStore(paths, options);
  const source = requireReadable(await new FileStateStore(paths).read(), paths.stateJson);
  const keys = await server.keys();
  return copyState(source, server, { from: paths.stateJson, to: `${displayRedisUrl(server.url)} ${keys.state}` }, options.force);
}

export async function runStorePull(options: TransferOptions, paths: WorkspacePaths = workspacePaths(findWorkspaceRoot())): Promise<string> {
  const server = serverStore(paths, options);
  const keys = await server.keys();
  const name = `${displayRedisUrl(server.url)} ${keys.state}`;
  const source = requireReadable(await server.readFromServer(), name);
  return copyState(source, new FileStateStore(paths), { from: name, to: paths.stateJson }, options.force);
}
