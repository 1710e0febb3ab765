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
import { createMcpTool, toolResultOf, type ListedTool, type McpServerHandle } from "./mcp-tool.ts";
import type { McpNotice, McpToolSet } from "./start-servers.ts";
import { ProcessGroupStdioTransport } from "./stdio-transport.ts";
import { byCodeUnits, mcpToolName } from "./tool-names.ts";

export interface ConnectInput {
  servers: McpServers;
  options: McpOptions;
  /** Where stdio servers start: the workspace root. */
  root: string;
  count: (text: string) => number;
  /** Tokens all MCP tool definitions together may take; tools past it are left out (a notice). */
  toolTokenCap: number;
  signal?: AbortSignal;
  env?: Record<string, string | undefined>;
}

/** A server listing more tools than this is cut (a notice); no model can choose among so many. */
const MAX_TOOLS_PER_SERVER = 200;

interface Connection {
  name: string;
  client: Client;
  transport: Transport;
  listed: ListedTool[];
}

function failureReason(error: unknown, transport: Transport | undefined, timedOut: boolean, timeoutMs: number, command: string | undefined): string {
  if (timedOut) return `it did not answer within ${timeoutMs} ms (raise "mcp": { "startupTimeoutMs": … } in your user config if it is just slow)`;
  const code = (error as { code?: unknown } | undefined)?.code;
  if (code === "ENOENT" && command !== undefined) return `the command ${JSON.stringify(command)} was not found (is it installed and on PATH?)`;
  if (code === "EACCES" && command !== undefined) return `the command ${JSON.stringify(command)} is not executable`;
  const exit = transport instanceof ProcessGroupStdioTransport ? transport.describeExit() : undefined;
  const message = describeError(error);
  const auth = /\b401\b|unauthori[sz]ed/i.test(message) ? " (the server wants authorization: pass a token with --header \"Authorization: Bearer ${TOKEN}\"; valarmind does not do OAuth)" : "";
  return exit !== undefined ? `the process ${exit}` : `${message}${auth}`;
}

async function connectOne(name: string, config: McpServerConfig, input: ConnectInput, timeoutMs: number): Promise<Connection> {
  const target = transportConfig(name, config, input.env ?? process.env);
  const transport: Transport =
    target.kind === "stdio"
      ? new ProcessGroupStdioTransport({ command: target.command, args: target.args, env: target.env, cwd: input.root })
      : new StreamableHTTPClientTransport(new URL(target.url), { requestInit: { headers: target.headers } });
  const client = new Client({ name: "valarmind", version: pkg.version }, { capabilities: {} });
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = input.signal ? AbortSignal.any([timeout, input.signal]) : timeout;
  try {
    await client.connect(transport, { signal, timeout: timeoutMs });
    const listed: ListedTool[] = [];
    if (client.getServerCapabilities()?.tools !== undefined) {
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor !== undefined ? { cursor } : undefined, { signal, timeout: timeoutMs });
        listed.push(...page.tools);
        cursor = page.nextCursor;
      } while (cursor !== undefined && listed.length < MAX_TOOLS_PER_SERVER);
    }
    return { name, client, transport, listed };
  } catch (error) {
    await client.close().catch(() => undefined);
    await transport.close().catch(() => undefined);
    throw new Error(failureReason(error, transport, timeout.aborted, timeoutMs, target.kind === "stdio" ? target.command : undefined));
  }
}

/** One connected server: calls its tools, knows when it stopped. */
function serverHandle(connection: Connection, allowed: boolean, callTimeoutMs: number, notify: (notice: McpNotice) => void, closing: () => boolean): McpServerHandle {
  const { name, client, transport } = connection;
  let stopped: string | undefined;
  client.onclose = () => {
    if (closing()) return;
    const exit = transport instanceof ProcessGroupStdioTransport ? transport.describeExit() : undefined;
    stopped = exit !== undefined ? `its process ${exit}` : "its connection closed";
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
        const result = await client.callTool({ name: tool, arguments: args }, undefined, { signal, timeout: callTimeoutMs });
        return toolResultOf(name, tool, result);
      } catch (error) {
        if (signal.aborted) return { forModel: `Aborted: the call to ${tool} on the MCP server "${name}" was cancelled.`, summary: `${name}/${tool}: aborted`, isError: true };
        if (stopped !== undefined) return stoppedResult(tool);
        const timedOut = /timed out/i.test(describeError(error)) ? ` (the limit is ${callTimeoutMs} ms: "mcp": { "callTimeoutMs": … } in the user config)` : "";
        return {
          forModel: `Error: calling ${tool} on the MCP server "${name}" failed: ${describeError(error)}${timedOut}`,
          summary: `${name}/${tool} failed: ${describeError(error)}`,
          isError: true,
        };
      }
    },
  };
}

/** The tools to offer, in order, within the token cap; what was left out, for a notice. */
function offeredTools(connections: Connection[], input: ConnectInput, handles: Map<string, McpServerHandle>, notify: (notice: McpNotice) => void): Tool[] {
  const taken = new Set<string>();
  const tools: Tool[] = [];
  const leftOut: string[] = [];
  let tokens = 0;
  for (const connection of connections) {
    const handle = handles.get(connection.name);
    if (!handle) continue;
    const wanted = input.servers[connection.name]?.tools;
    const listed = [...connection.listed].sort((a, b) => byCodeUnits(a.name, b.name));
    if (connection.listed.length >= MAX_TOOLS_PER_SERVER) {
      notify({ message: `MCP server "${connection.name}" lists more than ${MAX_TOOLS_PER_SERVER} tools; only the first ${MAX_TOOLS_PER_SERVER} were read`, code: "mcp_tools_left_out" });
    }
    const missing = (wanted ?? []).filter((tool) => !listed.some((l) => l.name === tool));
    if (missing.length > 0) notify({ message: `MCP server "${connection.name}" has no tool named ${missing.map((m) => JSON.stringify(m)).join(", ")} (its "tools" entry names them)` });
    for (const entry of listed) {
      if (wanted !== undefined && !wanted.includes(entry.name)) continue;
      const tool = createMcpTool(handle, entry, mcpToolName(connection.name, entry.name, taken));
      const spec = specsOf([tool])[0];
      const cost = spec ? input.count(JSON.stringify(spec)) : 0;
      if (leftOut.length > 0 || tokens + cost > input.toolTokenCap) {
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
        `MCP tool definitions may take at most ${input.toolTokenCap} tokens, a quarter of the request budget. ` +
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
          await connection.client.close().catch(() => undefined);
          await connection.transport.close().catch(() => undefined);
        }),
      );
    },
  };
}
