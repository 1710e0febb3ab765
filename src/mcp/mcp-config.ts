/**
 * MCP servers as settings (docs/mcp.md): `mcpServers` maps a server's name to how it is reached,
 * a program over stdio (`command`, `args`, `env`) or a streamable-HTTP URL (`url`, `headers`);
 * `mcp` holds the user's own choices (which servers may be called without asking, timeouts) and is
 * read from the user config only. The TypeBox schemas join the settings schema, so a wrong type is
 * reported like any setting; `mcpConfigProblem` adds what a schema cannot say (one transport per
 * server, names the tool names can carry), naming the file and the field.
 */
import { Type, type Static } from "@sinclair/typebox";
import { parsedWithoutCredentials, withoutCredentials } from "../secrets/url-credentials.ts";
import { MAX_TIMER_MS } from "../config/env-milliseconds.ts";

export const McpServerSchema = Type.Object(
  {
    command: Type.Optional(Type.String({ minLength: 1, description: "stdio server: the program to start (in the workspace root once the folder is trusted, else in your home directory)" })),
    args: Type.Optional(Type.Array(Type.String(), { description: "stdio server: its arguments" })),
    env: Type.Optional(
      Type.Record(Type.String(), Type.String(), { description: "stdio server: variables added to a minimal environment; ${VAR} takes VAR from yours" }),
    ),
    url: Type.Optional(Type.String({ minLength: 1, description: "streamable-HTTP server: its http(s) URL" })),
    headers: Type.Optional(Type.Record(Type.String(), Type.String(), { description: "HTTP server: request headers; ${VAR} takes VAR from your environment" })),
    tools: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { description: "offer only these tools of the server (by its names)" })),
  },
  { additionalProperties: false },
);

export const McpServersSchema = Type.Record(Type.String(), McpServerSchema, {
  description: "MCP servers by name; a project file's apply only in a trusted folder",
});

export const McpOptionsSchema = Type.Object(
  {
    allow: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { description: "servers whose tools run without asking (user config only)" })),
    startupTimeoutMs: Type.Optional(Type.Integer({ minimum: 100, maximum: 600_000, description: "how long a server may take to start and list its tools" })),
    callTimeoutMs: Type.Optional(Type.Integer({ minimum: 100, maximum: MAX_TIMER_MS, description: "how long one tool call may take" })),
  },
  { additionalProperties: false, description: "MCP client options; read from the user config only" },
);

export type McpServerConfig = Static<typeof McpServerSchema>;
export type McpServers = Static<typeof McpServersSchema>;
export type McpOptions = Static<typeof McpOptionsSchema>;

export const DEFAULT_STARTUP_TIMEOUT_MS = 10_000;
export const DEFAULT_CALL_TIMEOUT_MS = 120_000;

/** Letters, digits, `_` and `-`: the characters a model API allows in a tool name, which carries it. */
export const SERVER_NAME = /^[A-Za-z0-9_-]{1,32}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** RFC 9110 token characters. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** A server as it is reached, after checking; what `connect` works from. */
export type McpTransportConfig =
  | { kind: "stdio"; command: string; args: string[]; env: Record<string, string> }
  | { kind: "http"; url: string; headers: Record<string, string> };

/** What is wrong with one server entry (`where` names the field, e.g. `/mcpServers/echo/url`), or undefined. */
export function mcpServerProblem(name: string, server: McpServerConfig): { where: string; problem: string } | undefined {
  const at = `/mcpServers/${name}`;
  if (!SERVER_NAME.test(name)) return { where: at, problem: "a server name may use only letters, digits, '_' and '-' (1 to 32 characters)" };
  if (server.command !== undefined && server.url !== undefined) return { where: at, problem: "has both \"command\" (stdio) and \"url\" (HTTP); a server uses one" };
  if (server.command === undefined && server.url === undefined) return { where: at, problem: "needs \"command\" (a stdio server) or \"url\" (a streamable-HTTP server)" };
  if (server.url !== undefined) {
    if (!/^https?:$/.test(URL.parse(server.url)?.protocol ?? "")) return { where: `${at}/url`, problem: `is not an http(s) URL (got ${JSON.stringify(server.url)})` };
    if (server.args !== undefined || server.env !== undefined) return { where: at, problem: "\"args\" and \"env\" are for stdio servers (\"command\"), not for \"url\"" };
    for (const header of Object.keys(server.headers ?? {})) {
      if (!HEADER_NAME.test(header)) return { where: `${at}/headers`, problem: `${JSON.stringify(header)} is not a valid header name` };
    }
  }
  if (server.command !== undefined) {
    if (server.headers !== undefined) return { where: at, problem: "\"headers\" are for HTTP servers (\"url\"), not for \"command\"" };
    for (const variable of Object.keys(server.env ?? {})) {
      if (!ENV_NAME.test(variable)) return { where: `${at}/env`, problem: `${JSON.stringify(variable)} is not a valid environment variable name` };
    }
  }
  return undefined;
}

/**
 * The first problem of a settings layer's MCP entries, as one line naming the file and field, or
 * undefined. Types were already checked against the schema.
 */
export function mcpConfigProblem(file: string, layer: { mcpServers?: McpServers | undefined }): string | undefined {
  for (const [name, server] of Object.entries(layer.mcpServers ?? {})) {
    const found = mcpServerProblem(name, server);
    if (found) return `${file}: ${found.where} ${found.problem}`;
  }
  return undefined;
}

/**
 * The servers a run sees: the user's, plus the project's (trusted folders only) under names the
 * user does not use — a repository cannot replace a server the user configured.
 */
export function mergeMcpServers(user: McpServers | undefined, project: McpServers): McpServers {
  return { ...project, ...user };
}

/** `${NAME}` replaced by the variable's value; a variable that is not set is an error naming it. */
export function expandVariables(value: string, env: Record<string, string | undefined>, where: string): string {
  return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_match, name: string) => {
    const found = env[name];
    if (found === undefined) throw new Error(`${where} uses \${${name}}, which is not set in your environment`);
    return found;
  });
}

/** How to reach a checked server, with `${VAR}` taken from `env`; throws naming a missing variable. */
export function transportConfig(name: string, server: McpServerConfig, env: Record<string, string | undefined> = process.env): McpTransportConfig {
  const expandAll = (record: Record<string, string> | undefined, field: string): Record<string, string> =>
    Object.fromEntries(Object.entries(record ?? {}).map(([key, value]) => [key, expandVariables(value, env, `${field} ${key}`)]));
  if (server.url !== undefined) return { kind: "http", url: server.url, headers: expandAll(server.headers, `the header`) };
  if (server.command === undefined) throw new Error(`MCP server "${name}" has neither "command" nor "url"`);
  return { kind: "stdio", command: server.command, args: server.args ?? [], env: expandAll(server.env, `the variable`) };
}

/** One line for `mcp list` and notices: the program and its arguments, or the URL. Header and variable values are never shown. */
/**
 * A piece of a server's config as shown: as is when it is plain printable ASCII, else quoted with
 * every control and non-ASCII character escaped. A project's config is a clone's text: shown to
 * the user deciding whether to trust it, it must not be able to act on the terminal (an OSC 52
 * clipboard write, a redrawn line) nor pass for another host (a homograph).
 */
export function shownPart(part: string): string {
  if (/^[\w@%+=:,./?&#~*!-]+$/.test(part)) return part;
  return JSON.stringify(part).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** A server's URL as shown: as the URL parser reads it (percent-encoded, its host in ASCII), without user name or password. */
export function shownUrl(url: string): string {
  return shownPart(parsedWithoutCredentials(url)?.href ?? withoutCredentials(url));
}

export function describeServer(server: McpServerConfig): string {
  if (server.url !== undefined) {
    const headers = Object.keys(server.headers ?? {}).map(shownPart);
    return `${shownUrl(server.url)}${headers.length > 0 ? ` (headers: ${headers.join(", ")})` : ""}`;
  }
  const env = Object.keys(server.env ?? {}).map(shownPart);
  const line = [server.command ?? "", ...(server.args ?? [])].map(shownPart).join(" ");
  return `${line}${env.length > 0 ? ` (env: ${env.join(", ")})` : ""}`;
}

/** A server map for display (trust question, ignored-settings notice): names and how each starts, never header or variable values. */
export function describeServers(servers: unknown): string {
  if (typeof servers !== "object" || servers === null) return "(none)";
  const entries = Object.entries(servers as McpServers).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return entries.length === 0 ? "(none)" : entries.map(([name, server]) => `${shownPart(name)} (${describeServer(server)})`).join(", ");
}
