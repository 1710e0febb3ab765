/**
 * Connecting to MCP servers (the SDK's Client over stdio or streamable HTTP), listing their tools
 * and calling them. Every server starts at once, each within its startup timeout; a server that
 * fails to start, times out or stops later becomes a notice, and a call to a stopped server an
 * error result the model can read. Nothing here throws into a turn.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import pkg from "../../package.json" with { type: "json" };
import { describeError } from "../errors.ts";
import { specsOf } from "../tools/registry.ts";
import type { Tool, ToolResult } from "../tools/types.ts";
import { DEFAULT_CALL_TIMEOUT_MS, DEFAULT_STARTUP_TIMEOUT_MS, transportConfig, type McpOptions, type McpServerConfig, type McpServers } from "./mcp-config.ts";
import { bounded, createMcpTool, firstLine, toolResultOf, type ListedTool, type McpServerHandle } from "./mcp-tool.ts";
import type { McpNotice, McpToolSet } from "./start-servers.ts";
import { ProcessGroupStdioTransport } from "./stdio-transport.ts";
import { boundedFetch } from "./bounded-fetch.ts";
import { STDIO_DEFAULT_MAX_BUFFER_SIZE } from "@modelcontextprotocol/sdk/shared/stdio.js";
import { checkTool, LenientCallToolResultSchema, LenientListToolsResultSchema, pageTools, shownName } from "./tool-checks.ts";
import { byCodeUnits, mcpToolName } from "./tool-names.ts";

export interface ConnectInput {
  servers: McpServers;
  options: McpOptions;
  /** Where stdio servers start: the workspace root in a trusted folder, else the user's home (start-servers.ts). */
  cwd: string;
  count: (text: string) => number;
  /** Tokens all MCP tool definitions together may take (tool-budget.ts); a tool past it is left out (a notice). */
  toolTokenCap: number;
  signal?: AbortSignal;
  env?: Record<string, string | undefined>;
}

/** A server listing more tools than this is cut (a notice); no model can choose among so many. */
const MAX_TOOLS_PER_SERVER = 200;
/** `tools/list` pages read at most: a server whose pages never end is not read until the startup timeout. */
const MAX_LIST_PAGES = 50;
/** How long closing waits for an HTTP server to acknowledge the end of its session. */
const SESSION_END_WAIT_MS = 1_000;
/** A failure's own message in a notice (a server may answer with megabytes of error). */
const MAX_REASON_CHARS = 500;

interface Connection {
  name: string;
  client: Client;
  transport: Transport;
  /** The entries of its `tools/list` pages as sent, each checked on its own later (tool-checks.ts). */
  listed: unknown[];
  /** Why reading stopped while the server still had pages: too many tools, or too many pages. */
  stoppedReading?: "tools" | "pages" | undefined;
}

const cutText = (text: string, max: number): string => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** Why the transport ended a stdio server itself, else how its process ended (if it has). */
function transportEnd(transport: Transport | undefined): { because: string } | { exit: string } | undefined {
  if (!(transport instanceof ProcessGroupStdioTransport)) return undefined;
  if (transport.closedBecause !== undefined) return { because: transport.closedBecause };
  const exit = transport.describeExit();
  return exit !== undefined ? { exit } : undefined;
}

/** Call before closing the transport: once valarmind closes it, its exit says nothing about the failure. */
function failureReason(error: unknown, transport: Transport | undefined, timedOut: boolean, timeoutMs: number, command: string | undefined): string {
  if (timedOut) return `it did not answer within ${timeoutMs} ms (raise "mcp": { "startupTimeoutMs": … } in your user config if it is just slow)`;
  const code = (error as { code?: unknown } | undefined)?.code;
  if (code === "ENOENT" && command !== undefined) return `the command ${JSON.stringify(command)} was not found (is it installed and on PATH?)`;
  if (code === "EACCES" && command !== undefined) return `the command ${JSON.stringify(command)} is not executable`;
  const end = transportEnd(transport);
  if (end !== undefined) return "because" in end ? end.because : `the process ${end.exit}`;
  // The SDK puts an HTTP failure's status in `code`, not always in its message.
  const status = typeof code === "number" && code >= 100 && code < 600 ? code : undefined;
  const message = cutText(describeError(error), MAX_REASON_CHARS);
  const shown = status !== undefined && !message.includes(String(status)) ? `HTTP ${status}: ${message}` : message;
  const auth =
    status === 401 || status === 403 || /\b401\b|unauthori[sz]ed/i.test(message)
      ? " (the server wants authorization: pass a token with --header \"Authorization: Bearer ${TOKEN}\"; valarmind does not do OAuth)"
      : "";
  return `${shown}${auth}`;
}

async function connectOne(name: string, config: McpServerConfig, input: ConnectInput, timeoutMs: number): Promise<Connection> {
  const target = transportConfig(name, config, input.env ?? process.env);
  const transport: Transport =
    target.kind === "stdio"
      ? new ProcessGroupStdioTransport({ command: target.command, args: target.args, env: target.env, cwd: input.cwd })
      : new StreamableHTTPClientTransport(new URL(target.url), { requestInit: { headers: target.headers }, fetch: boundedFetch(STDIO_DEFAULT_MAX_BUFFER_SIZE) });
  const client = new Client({ name: "valarmind", version: pkg.version }, { capabilities: {} });
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = input.signal ? AbortSignal.any([timeout, input.signal]) : timeout;
  try {
    await client.connect(transport, { signal, timeout: timeoutMs });
    const listed: unknown[] = [];
    let stoppedReading: Connection["stoppedReading"];
    if (client.getServerCapabilities()?.tools !== undefined) {
      let cursor: string | undefined;
      let pages = 0;
      do {
        // Not client.listTools: it rejects the whole page for one bad tool. Each is checked later.
        const page = await client.request({ method: "tools/list", params: cursor !== undefined ? { cursor } : {} }, LenientListToolsResultSchema, { signal, timeout: timeoutMs });
        for (const tool of pageTools(page)) listed.push(tool); // not push(...): a page may hold a million entries
        cursor = page.nextCursor;
        pages++;
        if (cursor !== undefined && listed.length >= MAX_TOOLS_PER_SERVER) stoppedReading = "tools";
        else if (cursor !== undefined && pages >= MAX_LIST_PAGES) stoppedReading = "pages";
      } while (cursor !== undefined && stoppedReading === undefined);
    }
    return { name, client, transport, listed, stoppedReading };
  } catch (error) {
    // Writing to a server that just died fails before its exit is seen: wait a moment for it.
    const code = (error as { code?: unknown } | undefined)?.code;
    if (transport instanceof ProcessGroupStdioTransport && (code === "EPIPE" || code === "ECONNRESET")) await transport.exitedWithin(200);
    const reason = failureReason(error, transport, timeout.aborted, timeoutMs, target.kind === "stdio" ? target.command : undefined);
    await client.close().catch(() => undefined);
    await transport.close().catch(() => undefined);
    throw new Error(reason);
  }
}

/** One connected server: calls its tools, knows when it stopped. */
function serverHandle(connection: Connection, allowed: boolean, callTimeoutMs: number, notify: (notice: McpNotice) => void, closing: () => boolean): McpServerHandle {
  const { name, client, transport } = connection;
  let stopped: string | undefined;
  client.onclose = () => {
    if (closing()) return;
    const end = transportEnd(transport);
    stopped = end === undefined ? "its connection closed" : "because" in end ? end.because : `its process ${end.exit}`;
    notify({
      message: `MCP server "${name}" stopped (${stopped}); its tools answer with an error for the rest of this session`,
      code: "mcp_server_failed",
    });
  };
  const stoppedResult = (tool: string): ToolResult => ({
    forModel:
      `Error: the MCP server "${name}" is not running (${stopped ?? "it stopped"}), so ${tool} cannot be called in this session. ` +
      `Continue without its tools, or tell the user the server needs fixing.`,
    summary: `${name}/${tool}: server not running`,
    isError: true,
  });
  return {
    name,
    allowed,
    async callTool(tool, args, signal) {
      if (stopped !== undefined) return stoppedResult(tool);
      try {
        const result = await client.request({ method: "tools/call", params: { name: tool, arguments: args } }, LenientCallToolResultSchema, { signal, timeout: callTimeoutMs });
        return toolResultOf(name, tool, result);
      } catch (error) {
        if (signal.aborted) return { forModel: `Aborted: the call to ${tool} on the MCP server "${name}" was cancelled.`, summary: `${name}/${tool}: aborted`, isError: true };
        if (stopped !== undefined) return stoppedResult(tool);
        // The server's own message, bounded like a result: it may be megabytes.
        const message = bounded(describeError(error));
        const timedOut = /timed out/i.test(message) ? ` (the limit is ${callTimeoutMs} ms: "mcp": { "callTimeoutMs": … } in the user config)` : "";
        return {
          forModel: `Error: calling ${tool} on the MCP server "${name}" failed: ${message}${timedOut}`,
          summary: `${name}/${tool} failed: ${firstLine(message)}`,
          isError: true,
        };
      }
    },
  };
}

const nameOf = (raw: unknown): string | undefined => {
  const name = typeof raw === "object" && raw !== null ? (raw as { name?: unknown }).name : undefined;
  return typeof name === "string" ? name : undefined;
};

/**
 * A server's tools that may be offered, sorted by name: the ones its `tools` entry names (all
 * without one), each checked on its own (tool-checks.ts), at most MAX_TOOLS_PER_SERVER. The same
 * definitions give the same tools in the same order every session. Notices for the rest.
 */
function serverTools(connection: Connection, wanted: readonly string[] | undefined, notify: (notice: McpNotice) => void): ListedTool[] {
  const server = `MCP server "${connection.name}"`;
  const sorted = connection.listed.map((raw) => ({ raw, name: nameOf(raw) })).sort((a, b) => (a.name === undefined ? 1 : b.name === undefined ? -1 : byCodeUnits(a.name, b.name)));
  const kept: ListedTool[] = [];
  const invalid: string[] = [];
  const seen = new Set<string>();
  let overflow = 0;
  for (const entry of sorted) {
    if (entry.name !== undefined) seen.add(entry.name);
    if (wanted !== undefined && (entry.name === undefined || !wanted.includes(entry.name))) continue;
    if (kept.length >= MAX_TOOLS_PER_SERVER) {
      overflow++;
      continue;
    }
    const checked = checkTool(entry.raw);
    if (checked.ok) kept.push(checked.tool);
    else invalid.push(`${shownName(checked.name)}: ${checked.problem}`);
  }
  const read = connection.listed.length;
  const cut = overflow > 0 ? `; of those, only the first ${MAX_TOOLS_PER_SERVER} by name were kept` : "";
  if (connection.stoppedReading === "tools") {
    notify({ message: `${server} lists more than ${read} tools; only the first ${read} were read${cut}`, code: "mcp_tools_left_out" });
  } else if (connection.stoppedReading === "pages") {
    notify({ message: `${server} sent ${MAX_LIST_PAGES} pages of tools/list and had more; only the ${read} tool(s) on those pages were read${cut}`, code: "mcp_tools_left_out" });
  } else if (overflow > 0) {
    notify({ message: `${server} lists ${read} tools; only the first ${MAX_TOOLS_PER_SERVER} by name were kept`, code: "mcp_tools_left_out" });
  }
  if (invalid.length > 0) {
    notify({
      message: `${server}: ${invalid.length} tool(s) not offered, their definitions are invalid (${invalid.slice(0, 3).join("; ")}${invalid.length > 3 ? "; …" : ""})`,
      code: "mcp_tools_left_out",
    });
  }
  const missing = (wanted ?? []).filter((tool) => !seen.has(tool));
  if (missing.length > 0) notify({ message: `${server} has no tool named ${missing.map((m) => JSON.stringify(m)).join(", ")} (its "tools" entry names them)` });
  return kept;
}

/**
 * The tools to offer, in order, within the token cap; what was left out, for a notice. A tool
 * over what is left of the cap is skipped alone: the smaller ones after it are still offered.
 */
function offeredTools(connections: Connection[], input: ConnectInput, handles: Map<string, McpServerHandle>, notify: (notice: McpNotice) => void): Tool[] {
  const taken = new Set<string>();
  const tools: Tool[] = [];
  const leftOut: string[] = [];
  let tokens = 0;
  for (const connection of connections) {
    const handle = handles.get(connection.name);
    if (!handle) continue;
    for (const entry of serverTools(connection, input.servers[connection.name]?.tools, notify)) {
      const tool = createMcpTool(handle, entry, mcpToolName(connection.name, entry.name, taken));
      const spec = specsOf([tool])[0];
      const cost = spec ? input.count(JSON.stringify(spec)) : 0;
      if (tokens + cost > input.toolTokenCap) {
        leftOut.push(tool.name);
        continue;
      }
      tokens += cost;
      tools.push(tool);
    }
  }
  if (leftOut.length > 0) {
    notify({
      message:
        `${leftOut.length} MCP tool(s) were not offered (${leftOut.slice(0, 5).join(", ")}${leftOut.length > 5 ? ", …" : ""}): ` +
        `MCP tool definitions may take at most ${input.toolTokenCap} tokens (a quarter of maxContextTokens, less when the built-in tools and core rules leave less room). ` +
        `Name the tools you need in the server's "tools" list, or raise maxContextTokens.`,
      code: "mcp_tools_left_out",
    });
  }
  return tools;
}

export async function connectMcpServers(input: ConnectInput): Promise<McpToolSet> {
  const notices: McpNotice[] = [];
  const notify = (notice: McpNotice): void => void notices.push(notice);
  let closing = false;
  const startupMs = input.options.startupTimeoutMs ?? DEFAULT_STARTUP_TIMEOUT_MS;
  const callMs = input.options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
  const allow = new Set(input.options.allow ?? []);
  const names = Object.keys(input.servers).sort(byCodeUnits);
  const settled = await Promise.allSettled(
    names.map((name) => {
      const config = input.servers[name];
      return config ? connectOne(name, config, input, startupMs) : Promise.reject(new Error("no configuration"));
    }),
  );
  const connections: Connection[] = [];
  const handles = new Map<string, McpServerHandle>();
  settled.forEach((result, i) => {
    const name = names[i] ?? "";
    if (result.status === "rejected") {
      notify({ message: `MCP server "${name}" did not start: ${describeError(result.reason)}; its tools are not available this session`, code: "mcp_server_failed" });
      return;
    }
    connections.push(result.value);
    handles.set(name, serverHandle(result.value, allow.has(name), callMs, notify, () => closing));
  });
  const tools = offeredTools(connections, input, handles, notify);
  return {
    tools,
    takeNotices: () => notices.splice(0),
    async close() {
      if (closing) return;
      closing = true;
      await Promise.all(
        connections.map(async (connection) => {
          // An HTTP session is ended as the spec asks (a DELETE), so the server frees what it kept for it; bounded, like the rest.
          if (connection.transport instanceof StreamableHTTPClientTransport) {
            await Promise.race([connection.transport.terminateSession().catch(() => undefined), Bun.sleep(SESSION_END_WAIT_MS)]);
          }
          await connection.client.close().catch(() => undefined);
          await connection.transport.close().catch(() => undefined);
        }),
      );
    },
  };
}
