import type { Command } from "commander";

export interface McpAddOptions {
  url?: string;
  header?: string[];
  env?: string[];
  project?: boolean;
  allow?: boolean;
}

export interface McpRemoveOptions {
  project?: boolean;
}

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/** `valarmind mcp add|list|remove`: options only; the work is imported lazily. */
export function registerMcp(program: Command): void {
  const mcp = program.command("mcp").description("configure MCP servers: their tools are offered to the model (docs/mcp.md)");
  mcp
    .command("add <name> [command...]")
    .description("add a server: 'add NAME -- CMD [ARGS...]' (stdio) or 'add NAME --url URL' (streamable HTTP)")
    .option("--url <url>", "a streamable-HTTP server's URL")
    .option("-H, --header <name:value>", "an HTTP header (repeatable); ${VAR} takes VAR from your environment when the server starts", collect)
    .option("-e, --env <name=value>", "a variable for a stdio server (repeatable); ${VAR} takes VAR from your environment", collect)
    .option("--project", "write the project's .valarmind/config.json (used only in a trusted folder) instead of your user config")
    .option("--allow", "let this server's tools run without asking (adds it to mcp.allow in your user config)")
    .action(async (name: string, command: string[], opts: McpAddOptions) => {
      const { runMcpAdd } = await import("../actions/mcp.ts");
      process.exitCode = await runMcpAdd(name, command, opts);
    });
  mcp
    .command("list", { isDefault: true })
    .description("list the configured servers: where each is configured, how it starts, whether it asks")
    .action(async () => {
      const { runMcpList } = await import("../actions/mcp.ts");
      process.exitCode = await runMcpList();
    });
  mcp
    .command("remove <name>")
    .description("remove a server from your user config (or with --project from the project's)")
    .option("--project", "remove it from the project's .valarmind/config.json")
    .action(async (name: string, opts: McpRemoveOptions) => {
      const { runMcpRemove } = await import("../actions/mcp.ts");
      process.exitCode = await runMcpRemove(name, opts);
    });
}
