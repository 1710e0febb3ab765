/**
 * MCP tools in real `chat -p` runs: the CLI spawned against the fake Responses server, with the
 * echo server (test/fixtures/mcp/echo-server.ts, built with the same SDK) started over stdio by
 * valarmind, or served over streamable HTTP on loopback by the test. Covers the names and order
 * of the tools in the request, a result reaching the next request, approvals (`mcp.allow`, not
 * `--yes`), bounded and described results, a server that cannot start or dies (a notice, never a
 * failed turn), folder trust for project servers, and no process left behind.
 */
import { afterAll, afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { makeGitWorkspace } from "../agent/support/agent-harness.ts";
import { chat, jsonEvents } from "../agent/support/cli-chat.ts";
import { cleanupTempDirs, makeTempDir } from "../support/cli.ts";
import {
  startFakeResponsesServer,
  textStream,
  toolCallStream,
  toolNames,
  toolOutputsThisTurn,
  type FakeResponsesServer,
} from "../support/fake-responses-server.ts";
import { toolSpecs } from "../../src/tools/registry.ts";
import { startHttpEchoServer } from "../fixtures/mcp/echo-server.ts";

const ECHO_SERVER = resolve(import.meta.dir, "../fixtures/mcp/echo-server.ts");
const ECHO_TOOLS = ["add", "big", "crash", "echo", "env_var", "fail", "picture"];

let server: FakeResponsesServer;
let home: string;
let repo: string;
beforeEach(async () => {
  server = startFakeResponsesServer();
  home = await makeTempDir("valarmind-mcp-home-");
  repo = realpathSync(await makeGitWorkspace({ "README.md": "# demo\n" }));
});
afterEach(async () => {
  await server.close();
});
afterAll(cleanupTempDirs);

const configDir = (): string => join(home, ".config");

function writeConfig(file: string, value: Record<string, unknown>): void {
  mkdirSync(join(file, ".."), { recursive: true });
  writeFileSync(file, JSON.stringify(value));
}

const userConfig = (value: Record<string, unknown>): void => writeConfig(join(configDir(), "valarmind", "config.json"), value);
const echoServer = (env: Record<string, string> = {}) => ({ command: process.execPath, args: [ECHO_SERVER], env });

function run(args: readonly string[], env: Record<string, string> = {}) {
  return chat(args, { cwd: repo, server, env: { HOME: home, XDG_CONFIG_HOME: configDir(), OPENAI_API_KEY: "sk-test-not-for-servers", ...env } });
}

/** Running: signalable and, where /proc tells, not a zombie (an orphan whose reaper, e.g. a container's init, never reaps it). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /, "")[0] !== "Z";
  } catch {
    return true;
  }
}

/** Whether `pid` is gone within a second (an orphan is reaped by init shortly after it ends). */
async function gone(pid: number): Promise<boolean> {
  for (let i = 0; i < 20 && alive(pid); i++) await Bun.sleep(50);
  return !alive(pid);
}

const outputs = (index: number) => toolOutputsThisTurn(server.requests[index]?.body ?? {});

describe("MCP tools in chat -p", () => {
  test("an allowed server's tools follow the built-in ones, are counted in the manifest, and their results reach the next request", async () => {
    const pidFile = join(home, "server.pid");
    const childPidFile = join(home, "child.pid");
    userConfig({
      mcpServers: { echo: echoServer({ ECHO_PID_FILE: pidFile, ECHO_CHILD_PID_FILE: childPidFile, ECHO_SECRET: "${TEST_SECRET}" }) },
      mcp: { allow: ["echo"] },
    });
    server.enqueue(
      toolCallStream([
        { name: "mcp__echo__echo", arguments: { text: "hello" }, callId: "c1" },
        { name: "mcp__echo__env_var", arguments: { name: "ECHO_SECRET" }, callId: "c2" },
        { name: "mcp__echo__env_var", arguments: { name: "OPENAI_API_KEY" }, callId: "c3" },
        { name: "mcp__echo__picture", arguments: {}, callId: "c4" },
        { name: "mcp__echo__big", arguments: { lines: 5000 }, callId: "c5" },
        { name: "mcp__echo__fail", arguments: {}, callId: "c6" },
        { name: "mcp__echo__add", arguments: { a: "two", b: 3 }, callId: "c7" },
      ]),
      textStream("done"),
    );
    const r = await run(["-p", "use the echo server", "--json"], { TEST_SECRET: "from-my-environment" });
    expect(r.code).toBe(0);

    const first = server.requests[0]?.body ?? {};
    const builtIn = toolSpecs().map((spec) => spec.name);
    expect(toolNames(first)).toEqual([...builtIn, ...ECHO_TOOLS.map((tool) => `mcp__echo__${tool}`)]);
    const echoSpec = (first.tools as Array<Record<string, unknown>>).find((tool) => tool.name === "mcp__echo__echo");
    expect(echoSpec).toMatchObject({
      type: "function",
      description: "Returns the text it is given.",
      strict: false,
      parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    });

    const byCall = new Map(outputs(1).map((item) => [item.call_id, item.output ?? ""]));
    expect(byCall.get("c1")).toBe("echo: hello");
    // ${VAR} in the config is expanded; the user's secrets are not in the server's environment.
    expect(byCall.get("c2")).toBe("from-my-environment");
    expect(byCall.get("c3")).toBe("(unset)");
    expect(byCall.get("c4")).toBe("[image: image/png, 68 bytes; not shown, valarmind passes text only]\na transparent pixel");
    const big = byCall.get("c5") ?? "";
    expect(big).toStartWith("line 1 ");
    expect(big).toContain("cut from the middle of this output to fit the tool-output cap");
    expect(big).toContain("line 5000 ");
    expect(Buffer.byteLength(big)).toBeLessThan(2000 * 8);
    expect(byCall.get("c6")).toBe('Error from the MCP server "echo" (tool fail): this tool always fails');
    // The server validates its own arguments; its error comes back for the model to fix.
    expect(byCall.get("c7")).toContain('Error from the MCP server "echo" (tool add)');
    expect(byCall.get("c7")).toContain("a");

    const events = jsonEvents(r.stdout);
    expect(events.filter((e) => e.type === "approval_request")).toEqual([]);
    const built = events.find((e) => e.type === "request_built") as { manifest?: { path?: string } } | undefined;
    const manifest = JSON.parse(readFileSync(built?.manifest?.path ?? "", "utf8")) as { items: Array<{ id: string; tokens: number; region: string }> };
    const echoItem = manifest.items.find((item) => item.id === "tool:mcp__echo__echo");
    expect(echoItem).toMatchObject({ region: "tools" });
    expect(echoItem?.tokens).toBeGreaterThan(10);

    // Nothing the server started outlives the run.
    const pid = Number(readFileSync(pidFile, "utf8"));
    const childPid = Number(readFileSync(childPidFile, "utf8"));
    expect(await gone(pid)).toBe(true);
    expect(await gone(childPid)).toBe(true);
  });

  test("MCP tools ask in every mode: headless, even --yes refuses them unless mcp.allow names the server", async () => {
    userConfig({ mcpServers: { echo: echoServer() } });
    server.enqueue(toolCallStream([{ name: "mcp__echo__echo", arguments: { text: "hello" } }]), textStream("refused"));
    const r = await run(["-p", "use the echo server", "--yes"]);
    expect(r.code).toBe(0);
    const output = outputs(1)[0]?.output ?? "";
    expect(output).toStartWith("Refused: mcp__echo__echo is a tool of an MCP server");
    expect(output).toContain('add its name to "mcp": { "allow": [...] } in your user config');
    expect(output).toContain("--yes does not cover MCP tools");
    expect(output).not.toContain("echo: hello");
  });

  test("a server that cannot start is a notice; the turn and the other servers work", async () => {
    userConfig({ mcpServers: { broken: { command: "valarmind-no-such-mcp-server" }, echo: echoServer() }, mcp: { allow: ["echo"] } });
    server.enqueue(toolCallStream([{ name: "mcp__echo__add", arguments: { a: 2, b: 3 } }]), textStream("five"));
    const r = await run(["-p", "add", "--json"]);
    expect(r.code).toBe(0);
    const notices = jsonEvents(r.stdout).filter((e) => e.type === "notice");
    expect(notices).toContainEqual(
      expect.objectContaining({
        type: "notice",
        code: "mcp_server_failed",
        message:
          'MCP server "broken" did not start: the command "valarmind-no-such-mcp-server" was not found (is it installed and on PATH?); its tools are not available this session',
      }),
    );
    expect(toolNames(server.requests[0]?.body ?? {}).filter((name) => name.startsWith("mcp__"))).toEqual(ECHO_TOOLS.map((tool) => `mcp__echo__${tool}`));
    expect(outputs(1)[0]?.output).toBe("5");
    expect(jsonEvents(r.stdout).at(-1)).toMatchObject({ type: "turn_end", stopReason: "completed" });

    // Without --json the notice goes to stderr and the answer alone to stdout.
    server.enqueue(textStream("fine"));
    const plain = await run(["-p", "hi"]);
    expect(plain.code).toBe(0);
    expect(plain.stdout).toBe("fine\n");
    expect(plain.stderr).toContain('MCP server "broken" did not start');
  });

  test("a server that dies mid-session: a notice, and its tools answer with an error", async () => {
    userConfig({ mcpServers: { echo: echoServer() }, mcp: { allow: ["echo"] } });
    server.enqueue(
      toolCallStream([{ name: "mcp__echo__crash", arguments: {} }]),
      toolCallStream([{ name: "mcp__echo__echo", arguments: { text: "still there?" } }]),
      textStream("the server is gone"),
    );
    const r = await run(["-p", "crash it", "--json"]);
    expect(r.code).toBe(0);
    const output = outputs(2)[0]?.output ?? "";
    expect(output).toStartWith('Error: the MCP server "echo" is not running (its process exited with code 3; its stderr ended with: echo-server: crashing on purpose)');
    const notice = jsonEvents(r.stdout).find((e) => e.type === "notice" && e.code === "mcp_server_failed");
    expect(String(notice?.message)).toContain('MCP server "echo" stopped (its process exited with code 3');
    expect(jsonEvents(r.stdout).at(-1)).toMatchObject({ type: "turn_end", text: "the server is gone", stopReason: "completed" });
  });

  test("a project's servers start only in a trusted folder", async () => {
    const pidFile = join(home, "project-server.pid");
    writeConfig(join(repo, ".valarmind", "config.json"), { mcpServers: { local: echoServer({ ECHO_PID_FILE: pidFile }) } });
    // Even a user allow for that name does not make an untrusted project's server start.
    userConfig({ mcpServers: { mine: { command: "valarmind-no-such-mcp-server", env: { TOKEN: "literal-secret-123" } } }, mcp: { allow: ["local"] } });
    server.setResponder(() => textStream("ok"));

    const untrusted = await run(["-p", "hi"]);
    expect(untrusted.code).toBe(0);
    expect(untrusted.stderr).toContain(`ignoring .valarmind/config.json (mcpServers: local (${process.execPath} ${ECHO_SERVER} (env: ECHO_PID_FILE))): this folder is not trusted`);
    expect(untrusted.stderr).not.toContain("literal-secret-123");
    expect(existsSync(pidFile)).toBe(false);
    expect(toolNames(server.requests[0]?.body ?? {}).some((name) => name.startsWith("mcp__"))).toBe(false);

    const trusted = await run(["-p", "hi", "--trust"]);
    expect(trusted.code).toBe(0);
    expect(existsSync(pidFile)).toBe(true);
    expect(toolNames(server.requests[1]?.body ?? {})).toContain("mcp__local__echo");
    expect(await gone(Number(readFileSync(pidFile, "utf8")))).toBe(true);
  });

  test("a streamable-HTTP server on loopback, with a header taken from the environment", async () => {
    const http = startHttpEchoServer();
    try {
      userConfig({ mcpServers: { web: { url: http.url, headers: { "X-Test-Token": "${WEB_TOKEN}" } } }, mcp: { allow: ["web"] } });
      server.enqueue(toolCallStream([{ name: "mcp__web__add", arguments: { a: 2, b: 40 } }]), textStream("42"));
      const r = await run(["-p", "add over http"], { WEB_TOKEN: "token-123" });
      expect(r.code).toBe(0);
      expect(r.stdout).toBe("42\n");
      expect(toolNames(server.requests[0]?.body ?? {})).toContain("mcp__web__echo");
      expect(outputs(1)[0]?.output).toBe("42");
      expect(http.requests.length).toBeGreaterThan(0);
      expect(http.requests.every((request) => request.headers["x-test-token"] === "token-123")).toBe(true);
    } finally {
      await http.close();
    }
  });
});
