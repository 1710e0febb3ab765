/**
 * Settings load order: defaults < user (~/.config/valarmind/config.json) < project
 * (.valarmind/config.json) < environment < flags. Each file is validated; an invalid one is a
 * usage error naming the file and field.
 *
 * The project file comes with the repository, so it is untrusted input: it applies only in a
 * trusted folder (folder-trust.ts). In an untrusted one it may only narrow approvals; every other
 * setting it holds is ignored and reported, so a clone can neither widen what runs unasked nor
 * send the user's key to its own base URL.
 */
import { nonRegularFile } from "./non-regular-file.ts";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { Value, type ValueError } from "@sinclair/typebox/value";
import { describeError, UsageError } from "../errors.ts";
import { withoutCredentials } from "../secrets/url-credentials.ts";
import { mcpConfigProblem, mergeMcpServers } from "../mcp/mcp-config.ts";
import { userConfigDir, userConfigFileShown } from "./user-config-dir.ts";
import { HTTP_URL_PATTERN, SettingsSchema, type PartialSettings, type Settings } from "./settings-schema.ts";

const PartialSchema = { ...SettingsSchema, required: [] as string[] };

/** A bad value as the user wrote it: JSON, but a number JSON cannot hold (1e400 parses to Infinity) as what it became. */
/** Longest value quoted in an error: a huge one buried the hint (and a pipe cut the message). */
const SHOWN_VALUE_CHARS = 200;

function shownValue(value: unknown): string {
  if (typeof value === "number" && !Number.isFinite(value)) return `${value}, a number too large to hold`;
  // A URL's password (a store or server URL) is never echoed.
  const text = withoutCredentials(JSON.stringify(value) ?? String(value));
  return text.length > SHOWN_VALUE_CHARS ? `${text.slice(0, SHOWN_VALUE_CHARS)}… (${text.length} characters)` : text;
}

export function userConfigPath(): string {
  return join(userConfigDir(), "config.json");
}

export function projectConfigPath(root: string): string {
  return join(root, ".valarmind", "config.json");
}

/** The literals a union-of-literals schema allows (`approvals`, `sandbox`, …), else undefined. */
function allowedLiterals(schema: unknown): unknown[] | undefined {
  const anyOf = (schema as { anyOf?: unknown } | undefined)?.anyOf;
  if (!Array.isArray(anyOf)) return undefined;
  const literals = anyOf.map((member) => (member as { const?: unknown }).const);
  return literals.every((v) => v !== undefined) ? literals : undefined;
}

/** What a value should have been: the allowed values for a union of literals, else TypeBox's words. */
function expected(error: ValueError): string {
  if (error.schema.pattern === HTTP_URL_PATTERN) return "must be an http(s) URL such as http://127.0.0.1:8787/v1";
  const literals = allowedLiterals(error.schema);
  return literals ? `must be one of ${literals.map((v) => JSON.stringify(v)).join(", ")}` : error.message;
}

/** `checkMcp: false` reads a file whose MCP entries are broken (for `mcp remove`, which mends it). */
export function readLayer(file: string, options: { checkMcp?: boolean } = {}): PartialSettings {
  if (!existsSync(file)) return {};
  const info = statSync(file);
  if (info.isDirectory()) {
    throw new UsageError(`${file}: is a directory, not a settings file`, {
      hint: "Remove or rename that directory; settings go in a JSON file of that name (docs/configuration.md).",
    });
  }
  const special = nonRegularFile(info);
  if (special !== undefined) {
    // A FIFO would block the read forever; a device might never end.
    throw new UsageError(`${file}: is not a regular file (${special}), so it was not read`, {
      hint: "Remove it (a cloned repository may have shipped it); settings go in a JSON file of that name (docs/configuration.md).",
    });
  }
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    // Not a JSON problem: deleting the file is not the way out.
    throw new UsageError(`${file}: cannot be read (${describeError(error)})`, {
      hint: `Check the file's owner and mode (valarmind reads it as the user running it; chmod 600 ${file}).`,
    });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text.replace(/^\uFEFF/, ""));
  } catch (error) {
    throw new UsageError(`${file}: not valid JSON (${describeError(error)})`, {
      hint: "Fix the file or delete it to use the defaults.",
    });
  }
  const errors = [...Value.Errors(PartialSchema, parsed)];
  const first = errors[0];
  if (first) {
    throw new UsageError(`${file}: ${first.path || "/"} ${expected(first)} (got ${shownValue(first.value)})`, {
      hint: "See docs/configuration.md for the settings and their types.",
    });
  }
  const mcpProblem = options.checkMcp === false ? undefined : mcpConfigProblem(file, parsed as PartialSettings);
  if (mcpProblem) throw new UsageError(mcpProblem, { hint: "Fix the entry, or remove it with 'valarmind mcp remove NAME'; docs/mcp.md describes MCP servers." });
  return parsed as PartialSettings;
}

function envInt(name: string): number | undefined {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n)) {
    throw new UsageError(`environment variable ${name}=${raw} is not an integer`, { hint: `Set ${name} to a whole number, or unset it.` });
  }
  return n;
}

/** Each environment variable and the setting it sets. */
const ENV_SETTINGS = [
  ["VALARMIND_MODEL", "model"],
  ["OPENAI_BASE_URL", "baseURL"],
  ["VALARMIND_WIRE_API", "wireApi"],
  ["VALARMIND_REASONING_EFFORT", "reasoningEffort"],
  ["VALARMIND_APPROVALS", "approvals"],
  ["VALARMIND_SANDBOX", "sandbox"],
  ["VALARMIND_STORE", "store"],
] as const satisfies readonly (readonly [string, keyof Settings])[];

/** The environment's settings, each checked on its own so that an error names the variable. */
function envLayer(): PartialSettings {
  const layer: Record<string, unknown> = {};
  for (const [name, key] of ENV_SETTINGS) {
    const raw = process.env[name];
    if (raw) layer[key] = raw;
  }
  const base = process.env.OPENAI_BASE_URL;
  if (base && !/^https?:$/.test(URL.parse(base)?.protocol ?? "")) {
    throw new UsageError(`environment variable OPENAI_BASE_URL=${shownValue(base)} is not an http(s) URL`, {
      hint: "Set OPENAI_BASE_URL to the server's API root, e.g. http://127.0.0.1:8787/v1, or unset it for api.openai.com.",
    });
  }
  const max = envInt("MAX_CONTEXT_TOKENS");
  if (max !== undefined) layer.maxContextTokens = max;
  const turns = envInt("SHORT_BUFFER_TURNS");
  if (turns !== undefined) layer.shortBufferTurns = turns;
  const first = [...Value.Errors(PartialSchema, layer)][0];
  if (first) {
    const key = first.path.split("/")[1] ?? "";
    const name = ENV_SETTINGS.find(([, k]) => k === key)?.[0] ?? { maxContextTokens: "MAX_CONTEXT_TOKENS", shortBufferTurns: "SHORT_BUFFER_TURNS" }[key] ?? key;
    throw new UsageError(`environment variable ${name}=${shownValue(first.value)} (setting ${key}): ${expected(first)}`, {
      hint: `Set ${name} to an allowed value, or unset it; docs/configuration.md lists the settings.`,
    });
  }
  return layer as PartialSettings;
}

const APPROVAL_RANK: Record<Settings["approvals"], number> = { suggest: 0, "auto-edit": 1, "full-auto": 2 };
/** Higher is tighter; an untrusted project file may only raise it, so never to "off". */
const SANDBOX_RANK: Record<Settings["sandbox"], number> = { off: 0, "workspace-write": 1, "read-only": 2 };

/** Whether the project file's value only tightens what the user already has. */
function narrows(key: keyof Settings, from: unknown, to: unknown): boolean {
  if (key === "approvals") return APPROVAL_RANK[to as Settings["approvals"]] < APPROVAL_RANK[from as Settings["approvals"]];
  if (key === "sandbox") return SANDBOX_RANK[to as Settings["sandbox"]] > SANDBOX_RANK[from as Settings["sandbox"]];
  if (key === "network") return from === true && to === false;
  if (key === "shellProcessLimit") return (to as number) < (from as number);
  return false;
}

/** One setting the project file changes: its value without the project file and with it. */
export interface ProjectChange {
  key: keyof Settings;
  from: unknown;
  to: unknown;
  /** Applied even in an untrusted folder: it only narrows (approvals, sandbox, network, a lower process limit). */
  narrows: boolean;
}

export interface ProjectSettingsReport {
  file: string;
  trusted: boolean;
  /** Every setting the project file would change, whether applied or not. */
  changes: ProjectChange[];
  /** The changes left out because the folder is not trusted. */
  ignored: ProjectChange[];
  /** Keys the project file sets that only the user's own settings may set (`mcp`, `store`): always ignored. */
  userOnly: string[];
}

export interface LoadedSettings {
  settings: Settings;
  /** Undefined when the workspace has no project config file. */
  project: ProjectSettingsReport | undefined;
}

/** What the project file would change on top of defaults and the user's file. */
function projectChanges(base: Settings, project: PartialSettings): ProjectChange[] {
  const changes: ProjectChange[] = [];
  for (const [key, to] of Object.entries(project) as Array<[keyof Settings, unknown]>) {
    const from = base[key];
    if (to === undefined || JSON.stringify(from) === JSON.stringify(to)) continue;
    changes.push({ key, from, to, narrows: narrows(key, from, to) });
  }
  return changes;
}

/** Settings and what became of the project file; `trusted` says whether the folder is trusted. */
export function resolveSettings(root: string, flags: PartialSettings = {}, options: { trusted?: boolean } = {}): LoadedSettings {
  const trusted = options.trusted ?? false;
  const base = { ...(Value.Default(SettingsSchema, {}) as Settings), ...readLayer(userConfigPath()) };
  const projectFile = projectConfigPath(root);
  // `mcp` (which servers run unasked) is the user's choice alone; a project's servers join the user's, never replace one.
  // `store` too: a project pointing the user's agent at its own Redis would read and poison the state.
  const { mcp: projectMcp, store: projectStore, ...projectLayer } = readLayer(projectFile);
  const userOnly = [...(projectMcp !== undefined ? ["mcp"] : []), ...(projectStore !== undefined ? ["store"] : [])];
  if (projectLayer.mcpServers) projectLayer.mcpServers = mergeMcpServers(base.mcpServers, projectLayer.mcpServers);
  const changes = projectChanges(base, projectLayer);
  // Turning the shell sandbox off is the user's own choice (flag, env or user config), never a
  // repository's, trusted or not (docs/security.md).
  const applied = changes.filter((c) => c.narrows || (trusted && !(c.key === "sandbox" && c.to === "off")));
  const project: ProjectSettingsReport | undefined = existsSync(projectFile)
    ? { file: projectFile, trusted, changes, ignored: changes.filter((c) => !applied.includes(c)), userOnly }
    : undefined;
  const merged = {
    ...base,
    ...Object.fromEntries(applied.map((c) => [c.key, c.to])),
    ...envLayer(),
    ...Object.fromEntries(Object.entries(flags).filter(([, v]) => v !== undefined)),
  } as Settings;
  const first = [...Value.Errors(SettingsSchema, merged)][0];
  if (first) {
    throw new UsageError(`settings: ${first.path} ${expected(first)} (got ${shownValue(first.value)})`, {
      hint: "Check the environment variables and flags; docs/configuration.md lists the settings.",
    });
  }
  if (merged.windowBlockTurns > merged.shortBufferTurns) {
    throw new UsageError(
      `settings: windowBlockTurns (${merged.windowBlockTurns}) must not exceed shortBufferTurns (${merged.shortBufferTurns}): a block is part of the window`,
      { hint: `Lower windowBlockTurns or raise shortBufferTurns (SHORT_BUFFER_TURNS) in .valarmind/config.json or ${userConfigFileShown()}.` },
    );
  }
  return { settings: merged, project };
}

/** The settings alone (see `resolveSettings`); an untrusted project file only narrows approvals. */
export function loadSettings(root: string, flags: PartialSettings = {}, options: { trusted?: boolean } = {}): Settings {
  return resolveSettings(root, flags, options).settings;
}
