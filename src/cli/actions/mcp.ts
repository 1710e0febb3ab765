/**
 * `valarmind mcp add|list|remove` (docs/mcp.md). Servers go in the user's config.json by default;
 * `--project` writes the workspace's `.valarmind/config.json`, whose servers start only in a
 * trusted folder. Which servers run without asking (`mcp.allow`) is always the user's file.
 */
import { mkdirSync } from "node:fs";
import { dirname, relative } from "node:path";
import { projectConfigPath, readLayer, userConfigPath } from "../../config/load-settings.ts";
import { findWorkspaceRoot, workspacePaths } from "../../config/paths.ts";
import type { PartialSettings } from "../../config/settings-schema.ts";
import { PRIVATE_DIR_MODE, ensureValarmindDir } from "../../config/valarmind-dir.ts";
import { UsageError } from "../../errors.ts";
import { Value } from "@sinclair/typebox/value";
import { describeServer, McpServerSchema, mcpServerProblem, SERVER_NAME, shownPart, type McpServerConfig } from "../../mcp/mcp-config.ts";
import { editSettingsFile } from "../../mcp/mcp-config-file.ts";
import { byCodeUnits } from "../../mcp/tool-names.ts";
import type { McpAddOptions, McpRemoveOptions } from "../commands/mcp.ts";
import { decideTrust } from "./workspace-trust.ts";

const USAGE_HINT = "Usage: valarmind mcp add NAME -- CMD [ARGS...]  or  valarmind mcp add NAME --url URL [--header 'Name: value']...";

const write = (lines: string[]): void => void process.stdout.write(`${lines.join("\n")}\n`);

function checkName(name: string): void {
  if (!SERVER_NAME.test(name)) {
    throw new UsageError(`MCP server name ${JSON.stringify(name)}: use only letters, digits, '_' and '-' (1 to 32 characters)`, {
      hint: "The name becomes part of its tools' names (mcp__NAME__tool), which model APIs restrict to those characters.",
    });
  }
}

function pairs(values: readonly string[], separator: ":" | "=", flag: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const value of values) {
    const at = value.indexOf(separator);
    const key = at > 0 ? value.slice(0, at).trim() : "";
    if (key === "") {
      throw new UsageError(`${flag} ${JSON.stringify(value)}: expected NAME${separator}VALUE`, {
        hint: separator === ":" ? "For example: --header 'Authorization: Bearer ${MY_TOKEN}'." : "For example: --env LOG_LEVEL=debug.",
      });
    }
    out[key] = separator === ":" ? value.slice(at + 1).trim() : value.slice(at + 1);
  }
  return out;
}

/** The entry `mcp add` writes, checked like a config file's. */
function serverEntry(name: string, command: readonly string[], opts: McpAddOptions): McpServerConfig {
  const headers = pairs(opts.header ?? [], ":", "--header");
  const env = pairs(opts.env ?? [], "=", "--env");
  const [program, ...args] = command;
  if (opts.url !== undefined && program !== undefined) throw new UsageError("give either -- CMD [ARGS...] (a stdio server) or --url URL (an HTTP server), not both", { hint: USAGE_HINT });
  if (opts.url === undefined && program === undefined) throw new UsageError(`mcp add ${name}: no server given`, { hint: USAGE_HINT });
  if (opts.url !== undefined && Object.keys(env).length > 0) throw new UsageError("--env is for stdio servers (-- CMD); an HTTP server takes --header", { hint: USAGE_HINT });
  if (program !== undefined && Object.keys(headers).length > 0) throw new UsageError("--header is for HTTP servers (--url); a stdio server takes --env", { hint: USAGE_HINT });
  const entry: McpServerConfig =
    opts.url !== undefined
      ? { url: opts.url, ...(Object.keys(headers).length > 0 ? { headers } : {}) }
      : { command: program ?? "", ...(args.length > 0 ? { args } : {}), ...(Object.keys(env).length > 0 ? { env } : {}) };
  const problem = mcpServerProblem(name, entry);
  if (problem) throw new UsageError(`mcp add ${name}: ${problem.problem}`, { hint: USAGE_HINT });
  // What the settings schema would refuse on the next read (an empty command from an unset $SERVER,
  // an empty URL) is refused here, before it is written and locks every later command out.
  const invalid = [...Value.Errors(McpServerSchema, entry)][0];
  if (invalid) throw new UsageError(`mcp add ${name}: ${invalid.path.slice(1) || "the server"} ${invalid.message.toLowerCase()} (got ${JSON.stringify(invalid.value)})`, { hint: USAGE_HINT });
  return entry;
}

function userDir(): void {
  mkdirSync(dirname(userConfigPath()), { recursive: true, mode: PRIVATE_DIR_MODE });
}

/** Adds `name` to (or, with `allowed` false, removes it from) `mcp.allow` in the user config. */
async function setAllowed(name: string, allowed: boolean): Promise<boolean> {
  let changed = false;
  await editSettingsFile(userConfigPath(), userDir, (settings) => {
    const allow = settings.mcp?.allow ?? [];
    if (allow.includes(name) === allowed) return undefined;
    changed = true;
    const next = allowed ? [...allow, name] : allow.filter((n) => n !== name);
    return { ...settings, mcp: { ...settings.mcp, allow: next } };
  });
  return changed;
}

export async function runMcpAdd(name: string, command: string[], opts: McpAddOptions): Promise<number> {
  checkName(name);
  const entry = serverEntry(name, command, opts);
  const root = opts.project ? findWorkspaceRoot() : undefined;
  const file = root !== undefined ? projectConfigPath(root) : userConfigPath();
  const makeDir = root !== undefined ? () => void ensureValarmindDir(workspacePaths(root)) : userDir;
  await editSettingsFile(file, makeDir, (settings): PartialSettings => {
    const existing = settings.mcpServers !== undefined && Object.hasOwn(settings.mcpServers, name) ? settings.mcpServers[name] : undefined;
    if (existing !== undefined) {
      throw new UsageError(`${file}: an MCP server named "${name}" is already there (${describeServer(existing)})`, {
        hint: `Remove it first with 'valarmind mcp remove ${name}${opts.project ? " --project" : ""}', or pick another name.`,
      });
    }
    return { ...settings, mcpServers: { ...settings.mcpServers, [name]: entry } };
  });
  const lines = [`added MCP server "${name}" (${entry.url !== undefined ? "streamable HTTP" : "stdio"}: ${describeServer(entry)}) to ${file}`];
  if (opts.allow) {
    await setAllowed(name, true);
    lines.push(`its tools run without asking ("${name}" is in mcp.allow in ${userConfigPath()})`);
  } else {
    lines.push(`its tools ask before each call; to let them run without asking, add "${name}" to "mcp": { "allow": [...] } in ${userConfigPath()} (or add the server with --allow)`);
  }
  if (root !== undefined && !decideTrust(root, undefined).trusted) {
    lines.push(`this folder is not trusted, so its project servers do not start; if you trust it, run 'valarmind trust'`);
  }
  write(lines);
  return 0;
}

export async function runMcpRemove(name: string, opts: McpRemoveOptions): Promise<number> {
  const root = opts.project ? findWorkspaceRoot() : undefined;
  const file = root !== undefined ? projectConfigPath(root) : userConfigPath();
  const makeDir = root !== undefined ? () => void ensureValarmindDir(workspacePaths(root)) : userDir;
  let found = false;
  let names: string[] = [];
  await editSettingsFile(file, makeDir, (settings) => {
    const servers = { ...settings.mcpServers };
    names = Object.keys(servers);
    if (!Object.hasOwn(servers, name)) return undefined;
    found = true;
    delete servers[name];
    const { mcpServers: _old, ...rest } = settings;
    return Object.keys(servers).length > 0 ? { ...rest, mcpServers: servers } : rest;
  }, { mendsMcp: true });
  if (!found) {
    const other = opts.project ? "your user config (without --project)" : "the project's config (--project)";
    throw new UsageError(`${file}: no MCP server named "${name}"${names.length > 0 ? ` (it has: ${names.join(", ")})` : ""}`, {
      hint: `'valarmind mcp list' shows every server and its file; it may be in ${other}.`,
    });
  }
  const lines = [`removed MCP server "${name}" from ${file}`];
  // A name left in mcp.allow would let a later server of that name run unasked.
  if (!opts.project && (await setAllowed(name, false))) lines.push(`and "${name}" from mcp.allow`);
  write(lines);
  return 0;
}

function serverLines(servers: Record<string, McpServerConfig>, allow: readonly string[], shadowed: (name: string) => boolean): string[] {
  const width = Math.max(...Object.keys(servers).map((name) => name.length));
  return Object.keys(servers)
    .sort(byCodeUnits)
    .map((name) => {
      const server = servers[name] ?? {};
      const transport = server.url !== undefined ? "http " : "stdio";
      const status = shadowed(name)
        ? "ignored: your user config has a server of that name"
        : allow.includes(name)
          ? "runs without asking (mcp.allow)"
          : "asks before each call";
      const only = server.tools !== undefined ? ` (tools: ${server.tools.map(shownPart).join(", ")})` : "";
      return `  ${shownPart(name).padEnd(width)}  ${transport}  ${describeServer(server)}${only}  · ${status}`;
    });
}

function workspaceRootIfAny(): string | undefined {
  try {
    return findWorkspaceRoot();
  } catch {
    return undefined;
  }
}

export async function runMcpList(): Promise<number> {
  const userFile = userConfigPath();
  const user = readLayer(userFile);
  const userServers = user.mcpServers ?? {};
  const allow = user.mcp?.allow ?? [];
  const root = workspaceRootIfAny();
  const project: PartialSettings = root !== undefined ? readLayer(projectConfigPath(root)) : {};
  const projectServers = project.mcpServers ?? {};
  if (Object.keys(userServers).length === 0 && Object.keys(projectServers).length === 0) {
    write(["no MCP servers configured (docs/mcp.md)", `add one: ${USAGE_HINT.replace(/^Usage: /, "")}`]);
    return 0;
  }
  const lines: string[] = [];
  if (Object.keys(userServers).length > 0) lines.push(`user: ${userFile}`, ...serverLines(userServers, allow, () => false));
  if (root !== undefined && Object.keys(projectServers).length > 0) {
    const trusted = decideTrust(root, undefined).trusted;
    const file = relative(root, projectConfigPath(root));
    lines.push(`project: ${file}${trusted ? "" : " (this folder is not trusted: these servers do not start; 'valarmind trust' if you trust it)"}`);
    lines.push(...serverLines(projectServers, allow, (name) => Object.hasOwn(userServers, name)));
  }
  if (project.mcp !== undefined) lines.push(`note: ${relative(root ?? "", projectConfigPath(root ?? ""))} sets "mcp", which only your user config can set; it is ignored`);
  write(lines);
  return 0;
}
