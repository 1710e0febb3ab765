/**
 * `valarmind mcp add|list|remove`, spawned for real with their own HOME and XDG_CONFIG_HOME:
 * what each writes where, what `list` says about trust and approvals, and the errors for bad
 * input and bad config files (naming the file and the field).
 */
import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, realpathSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { makeGitWorkspace } from "../agent/support/agent-harness.ts";
import { cleanupTempDirs, makeTempDir, runCli, type CliResult } from "../support/cli.ts";

const ECHO_SERVER = resolve(import.meta.dir, "../fixtures/mcp/echo-server.ts");

let home: string;
let repo: string;
beforeEach(async () => {
  home = await makeTempDir("valarmind-mcp-home-");
  repo = realpathSync(await makeGitWorkspace({ "README.md": "# demo\n" }));
});
afterAll(cleanupTempDirs);

const configDir = (): string => join(home, ".config");
const userFile = (): string => join(configDir(), "valarmind", "config.json");
const projectFile = (): string => join(repo, ".valarmind", "config.json");

function mcp(args: readonly string[]): Promise<CliResult> {
  return runCli(["mcp", ...args], { cwd: repo, env: { HOME: home, XDG_CONFIG_HOME: configDir() } });
}

const readJson = (file: string): Record<string, unknown> => JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;

describe("valarmind mcp add / list / remove", () => {
  test("a stdio and an HTTP server round-trip through the user config; other settings are kept", async () => {
    mkdirSync(join(configDir(), "valarmind"), { recursive: true });
    writeFileSync(userFile(), JSON.stringify({ model: "gpt-5-mini" }));

    const added = await mcp(["add", "echo", "--env", "LOG=debug", "--", "bun", ECHO_SERVER, "--flag"]);
    expect(added.code).toBe(0);
    expect(added.stdout).toContain(`added MCP server "echo" (stdio: bun ${ECHO_SERVER} --flag (env: LOG)) to ${userFile()}`);
    expect(added.stdout).toContain("ask before each call");
    const http = await mcp(["add", "docs", "--url", "https://example.com/mcp", "--header", "Authorization: Bearer ${DOCS_TOKEN}", "-H", "X-Team:core"]);
    expect(http.code).toBe(0);

    expect(readJson(userFile())).toEqual({
      model: "gpt-5-mini",
      mcpServers: {
        echo: { command: "bun", args: [ECHO_SERVER, "--flag"], env: { LOG: "debug" } },
        docs: { url: "https://example.com/mcp", headers: { Authorization: "Bearer ${DOCS_TOKEN}", "X-Team": "core" } },
      },
    });
    expect(statSync(userFile()).mode & 0o777).toBe(0o600);

    const listed = await mcp(["list"]);
    expect(listed.code).toBe(0);
    const lines = listed.stdout.trim().split("\n");
    expect(lines[0]).toBe(`user: ${userFile()}`);
    // Sorted by name; header values are never printed.
    expect(lines[1]).toBe("  docs  http   https://example.com/mcp (headers: Authorization, X-Team)  · asks before each call");
    expect(lines[2]).toBe(`  echo  stdio  bun ${ECHO_SERVER} --flag (env: LOG)  · asks before each call`);
    expect(listed.stdout).not.toContain("DOCS_TOKEN");

    const removed = await mcp(["remove", "docs"]);
    expect(removed.code).toBe(0);
    expect(removed.stdout).toContain(`removed MCP server "docs" from ${userFile()}`);
    expect(Object.keys(readJson(userFile()).mcpServers as object)).toEqual(["echo"]);
    expect((await mcp(["remove", "echo"])).code).toBe(0);
    expect(readJson(userFile())).toEqual({ model: "gpt-5-mini" });
    expect((await mcp(["list"])).stdout).toContain("no MCP servers configured");
  });

  test("--allow puts the server in mcp.allow; remove takes it out again", async () => {
    const added = await mcp(["add", "echo", "--allow", "--", "bun", ECHO_SERVER]);
    expect(added.code).toBe(0);
    expect(added.stdout).toContain('its tools run without asking ("echo" is in mcp.allow');
    expect(readJson(userFile()).mcp).toEqual({ allow: ["echo"] });
    expect((await mcp(["list"])).stdout).toContain("· runs without asking (mcp.allow)");
    const removed = await mcp(["remove", "echo"]);
    expect(removed.stdout).toContain('and "echo" from mcp.allow');
    expect(readJson(userFile()).mcp).toEqual({ allow: [] });
  });

  test("--project writes the workspace's config; list says it does not start while the folder is untrusted", async () => {
    const added = await mcp(["add", "local", "--project", "--", "bun", ECHO_SERVER]);
    expect(added.code).toBe(0);
    expect(added.stdout).toContain("this folder is not trusted, so its project servers do not start");
    expect(readJson(projectFile())).toEqual({ mcpServers: { local: { command: "bun", args: [ECHO_SERVER] } } });
    expect(existsSync(userFile())).toBe(false);

    const untrusted = await mcp(["list"]);
    expect(untrusted.stdout).toContain("project: .valarmind/config.json (this folder is not trusted: these servers do not start;");
    const trust = await runCli(["trust"], { cwd: repo, env: { HOME: home, XDG_CONFIG_HOME: configDir() } });
    expect(trust.code).toBe(0);
    expect(trust.stdout).toContain(`mcpServers: (unset) → local (bun ${ECHO_SERVER})`);
    expect(trust.stdout).toContain("the MCP servers it adds would start with every chat");
    const trusted = await mcp(["list"]);
    expect(trusted.stdout).toContain("project: .valarmind/config.json\n");
    expect(trusted.stdout).toContain(`  local  stdio  bun ${ECHO_SERVER}  · asks before each call`);

    // A user server of the same name wins; the project's is listed as ignored.
    expect((await mcp(["add", "local", "--", "node", "mine.js"])).code).toBe(0);
    expect((await mcp(["list"])).stdout).toContain("· ignored: your user config has a server of that name");
    expect((await mcp(["remove", "local", "--project"])).code).toBe(0);
    expect(readJson(projectFile())).toEqual({});
  });

  test("bad input is a usage error (exit 2) that says what to do; nothing is written", async () => {
    const cases: Array<[string[], string]> = [
      [["add", "bad.name", "--", "bun"], 'MCP server name "bad.name": use only letters, digits'],
      [["add", "x"], "mcp add x: no server given"],
      [["add", "x", "--url", "https://a.example", "--", "bun"], "give either -- CMD [ARGS...] (a stdio server) or --url URL"],
      [["add", "x", "--url", "ftp://a.example"], 'mcp add x: is not an http(s) URL (got "ftp://a.example")'],
      [["add", "x", "--url", "https://a.example", "--header", "NoColon"], '--header "NoColon": expected NAME:VALUE'],
      [["add", "x", "--header", "A: b", "--", "bun"], "--header is for HTTP servers (--url)"],
      [["remove", "ghost"], `${userFile()}: no MCP server named "ghost"`],
    ];
    for (const [args, message] of cases) {
      const r = await mcp(args);
      expect({ args, code: r.code }).toEqual({ args, code: 2 });
      expect(r.stderr).toContain(message);
    }
    expect(existsSync(userFile())).toBe(false);
    expect((await mcp(["add", "echo", "--", "bun", ECHO_SERVER])).code).toBe(0);
    const twice = await mcp(["add", "echo", "--", "node", "other.js"]);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain(`${userFile()}: an MCP server named "echo" is already there`);
    expect(readJson(userFile()).mcpServers).toEqual({ echo: { command: "bun", args: [ECHO_SERVER] } });
  });

  test("an invalid entry in a config file is an error naming the file and the field, for mcp and chat alike", async () => {
    mkdirSync(join(configDir(), "valarmind"), { recursive: true });
    const entries: Array<[unknown, string]> = [
      [{ echo: { command: "bun", args: "x.ts" } }, `${userFile()}: /mcpServers/echo/args Expected array`],
      [{ echo: { command: "bun", url: "https://a.example" } }, `${userFile()}: /mcpServers/echo has both "command" (stdio) and "url" (HTTP)`],
      [{ echo: {} }, `${userFile()}: /mcpServers/echo needs "command" (a stdio server) or "url"`],
      [{ "my server": { command: "bun" } }, `${userFile()}: /mcpServers/my server a server name may use only letters`],
      [{ echo: { command: "bun", headers: { A: "b" } } }, `${userFile()}: /mcpServers/echo "headers" are for HTTP servers`],
    ];
    for (const [servers, message] of entries) {
      writeFileSync(userFile(), JSON.stringify({ mcpServers: servers }));
      const listed = await mcp(["list"]);
      expect(listed.code).toBe(2);
      expect(listed.stderr).toContain(message);
      const chat = await runCli(["chat", "-p", "hi"], { cwd: repo, env: { HOME: home, XDG_CONFIG_HOME: configDir(), OPENAI_API_KEY: "sk-test" } });
      expect(chat.code).toBe(2);
      expect(chat.stderr).toContain(message);
    }
    writeFileSync(userFile(), JSON.stringify({ mcp: { allow: "echo" } }));
    const allow = await mcp(["list"]);
    expect(allow.code).toBe(2);
    expect(allow.stderr).toContain(`${userFile()}: /mcp/allow Expected array`);
  });
});
