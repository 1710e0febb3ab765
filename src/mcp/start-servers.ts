/**
 * The MCP servers of one run, as the agent sees them: their tools (offered after the built-in
 * ones), notices (a server that did not start or stopped, tools left out) and `close`, which ends
 * every server process. The run (the `chat` command) starts them once; sessions it opens share
 * them (`/clear` does not restart them). With no server configured nothing is loaded: the SDK
 * is imported only when there is a server to start.
 */
import type { NoticeCode } from "../agent/events.ts";
import type { Settings } from "../config/settings-schema.ts";
import { homeDir } from "../config/home-dir.ts";
import { storedTrust } from "../config/folder-trust.ts";
import type { Tool } from "../tools/types.ts";
import { trace } from "../trace.ts";

export interface McpNotice {
  message: string;
  code?: NoticeCode;
}

export interface McpToolSet {
  /** In the order the model sees them: servers by name, each server's tools by name. */
  readonly tools: readonly Tool[];
  /** Notices not told yet (each is returned once). */
  takeNotices(): McpNotice[];
  /** Ends every server (process groups included); idempotent. */
  close(): Promise<void>;
}

export const NO_MCP_SERVERS: McpToolSet = { tools: [], takeNotices: () => [], close: async () => {} };

export type McpSettings = Pick<Settings, "mcpServers" | "mcp" | "maxContextTokens"> & Partial<Pick<Settings, "shellTimeoutMs">>;

/**
 * Starts the configured servers concurrently, each within `mcp.startupTimeoutMs`; one that fails
 * is a notice, never an error. `settings` are the run's: a project's servers are in them only
 * when the folder is trusted (load-settings.ts). Stdio servers start in the workspace root when
 * the folder is trusted, else in the user's home directory.
 */
/** `trusted`: this run's trust decision (`--trust` counts), by default the stored one. */
export async function startMcpServers(settings: McpSettings, root: string, signal?: AbortSignal, trusted: boolean = storedTrust(root) === "trusted"): Promise<McpToolSet> {
  const servers = settings.mcpServers ?? {};
  if (Object.keys(servers).length === 0) return NO_MCP_SERVERS;
  const [{ connectMcpServers }, { loadTokenizer }, { fixedRequestTokens, mcpToolTokenCap }] = await Promise.all([
    import("./mcp-servers.ts"),
    import("../tokens/tokenizer.ts"),
    import("./tool-budget.ts"),
  ]);
  const count = await loadTokenizer();
  const started = await connectMcpServers({
    servers,
    options: settings.mcp ?? {},
    // A server started in an untrusted clone would read the clone's own files as its setup:
    // bunfig.toml preloads and .env for `bun`, node_modules/.bin and .npmrc for `npx`, a module
    // of the same name for `python -m`. The user's servers start there only once it is trusted.
    cwd: trusted ? root : (homeDir() ?? "/"),
    count,
    // Tool definitions ride on every request: MCP tools may take at most a quarter of its budget,
    // and less when the core rules and built-in tools leave less room (tool-budget.ts).
    toolTokenCap: mcpToolTokenCap(settings.maxContextTokens, fixedRequestTokens(count, settings)),
    ...(signal !== undefined ? { signal } : {}),
  });
  trace(`mcp: ${Object.keys(servers).length} server(s) configured, ${started.tools.length} tool(s) offered`);
  return started;
}
