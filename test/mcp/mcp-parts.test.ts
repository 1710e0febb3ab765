/**
 * The MCP client's parts on their own: tool names within the API's limits, the schema passed to
 * the model, results turned into bounded text, the approval gate's rule for external tools, the
 * settings merge (project servers join, never replace; `mcp` is the user's alone), the registry's
 * handling of a foreign schema, and the token cap and `tools` filter against the real echo server.
 */
import { afterAll, afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { resolveSettings } from "../../src/config/load-settings.ts";
import { MAX_RESULT_BYTES, createMcpTool, modelParameters, toolResultOf, type McpServerHandle } from "../../src/mcp/mcp-tool.ts";
import { connectMcpServers } from "../../src/mcp/mcp-servers.ts";
import { MAX_TOOL_NAME, mcpToolName } from "../../src/mcp/tool-names.ts";
import { createApprovalGate, type ApprovalSubject } from "../../src/tools/approvals.ts";
import { createToolRegistry } from "../../src/tools/registry.ts";
import { countTokens, loadTokenizer } from "../../src/tokens/tokenizer.ts";
import { cleanupTempDirs, makeTempDir } from "../support/cli.ts";

const ECHO_SERVER = resolve(import.meta.dir, "../fixtures/mcp/echo-server.ts");
const API_NAME = /^[A-Za-z0-9_-]{1,64}$/;

afterAll(cleanupTempDirs);

describe("tool names", () => {
  test("mcp__<server>__<tool>, other characters as _, within 64 characters, the same every time", () => {
    const taken = new Set<string>();
    expect(mcpToolName("gh", "get_issue", taken)).toBe("mcp__gh__get_issue");
    expect(mcpToolName("gh", "repos.list/v2 (beta)", taken)).toBe("mcp__gh__repos_list_v2__beta_");
    const long = "a-very-long-tool-name-that-goes-on-and-on-and-on-for-ever";
    const name = mcpToolName("server-with-a-long-name", long, taken);
    expect(name.length).toBeLessThanOrEqual(MAX_TOOL_NAME);
    expect(name).toStartWith("mcp__server-with-a-long-name__a-very-long");
    expect(mcpToolName("server-with-a-long-name", long, new Set())).toBe(name);
    for (const n of taken) expect(n).toMatch(API_NAME);
  });

  test("two tools that sanitize alike get different, stable names", () => {
    const first = new Set<string>();
    const a = mcpToolName("s", "read.file", first);
    const b = mcpToolName("s", "read_file", first);
    expect(a).toBe("mcp__s__read_file");
    expect(b).not.toBe(a);
    expect(b).toMatch(/^mcp__s__read_file_[0-9a-f]{8}$/);
    const again = new Set<string>();
    expect([mcpToolName("s", "read.file", again), mcpToolName("s", "read_file", again)]).toEqual([a, b]);
  });
});

describe("parameters and results", () => {
  test("the input schema passes through as an object schema", () => {
    expect(modelParameters({ $schema: "http://json-schema.org/draft-07/schema#", type: "object", properties: { q: { type: "string" } }, required: ["q"], $defs: { x: {} } })).toEqual({
      type: "object",
      properties: { q: { type: "string" } },
      required: ["q"],
      $defs: { x: {} },
    });
    expect(modelParameters({ type: "object" })).toEqual({ type: "object", properties: {} });
    expect(modelParameters({ type: "string" })).toEqual({ type: "object", properties: {} });
    expect(modelParameters(undefined)).toEqual({ type: "object", properties: {} });
  });

  test("text joined, other content described, structured content as JSON, errors named", () => {
    const result = toolResultOf("docs", "fetch", {
      content: [
        { type: "text", text: "first" },
        { type: "resource_link", uri: "file:///a.md", name: "a.md", mimeType: "text/markdown" },
        { type: "resource", resource: { uri: "file:///b.txt", text: "inline text" } },
        { type: "resource", resource: { uri: "file:///c.bin", mimeType: "application/octet-stream", blob: "AAAA" } },
        { type: "audio", data: "AAAAAAAA", mimeType: "audio/wav" },
      ],
    });
    expect(result).toEqual({
      forModel: [
        "first",
        "[resource link: a.md <file:///a.md>, text/markdown]",
        "[resource file:///b.txt]\ninline text",
        "[resource file:///c.bin: application/octet-stream, 3 bytes of binary data; not shown]",
        "[audio: audio/wav, 6 bytes; not shown, valarmind passes text only]",
      ].join("\n"),
      summary: expect.stringMatching(/^docs\/fetch: \d+ bytes$/),
      isError: false,
    });
    expect(toolResultOf("s", "t", { content: [], structuredContent: { n: 1 } }).forModel).toBe('{"n":1}');
    expect(toolResultOf("s", "t", { content: [] }).forModel).toBe("(the tool returned no content)");
    expect(toolResultOf("s", "t", { content: [{ type: "text", text: "no such repo" }], isError: true })).toEqual({
      forModel: 'Error from the MCP server "s" (tool t): no such repo',
      summary: "s/t failed: no such repo",
      isError: true,
    });
  });

  test("a huge result keeps its head and tail within the bound", () => {
    const text = `HEAD\n${"y".repeat(MAX_RESULT_BYTES * 3)}\nTAIL`;
    const { forModel } = toolResultOf("s", "t", { content: [{ type: "text", text }] });
    expect(Buffer.byteLength(forModel)).toBeLessThan(MAX_RESULT_BYTES + 200);
    expect(forModel).toStartWith("HEAD\n");
    expect(forModel).toEndWith("\nTAIL");
    expect(forModel).toContain("bytes of this result in the middle were not kept");
  });
});

describe("approvals for external tools", () => {
  const subject: ApprovalSubject = { name: "mcp__echo__echo", argsKey: "{}" };

  test("ask in every mode, full-auto included; the user's allow lets them run; a warning still asks", () => {
    for (const mode of ["suggest", "auto-edit", "full-auto"] as const) {
      expect(createApprovalGate({ mode, interactive: true }).decide(subject, "external")).toBe("ask");
      expect(createApprovalGate({ mode, interactive: false }).decide(subject, "external")).toBe("deny");
      expect(createApprovalGate({ mode, interactive: false }).decide({ ...subject, allowedBySettings: true }, "external")).toBe("allow");
    }
    expect(createApprovalGate({ mode: "suggest", interactive: true }).decide({ ...subject, allowedBySettings: true, escalate: "something risky" }, "external")).toBe("ask");
    // Other kinds are unchanged: full-auto still runs shell commands.
    expect(createApprovalGate({ mode: "full-auto", interactive: false }).decide({ name: "run_shell", argsKey: "{}", command: "ls" }, "shell")).toBe("allow");
  });

  test("'allow for this session' remembers the tool", async () => {
    const gate = createApprovalGate({ mode: "full-auto", interactive: true });
    const decision = await gate.confirm({ callId: "c1", name: subject.name, description: "mcp echo: echo" }, subject, async (request) => {
      expect(request.remember).toEqual({ kind: "tool", tool: "mcp__echo__echo" });
      return { kind: "allow_session", scope: "tool" };
    }, new AbortController().signal);
    expect(decision.kind).toBe("allow_session");
    expect(gate.decide(subject, "external")).toBe("allow");
    expect(gate.decide({ ...subject, name: "mcp__echo__add" }, "external")).toBe("ask");
  });
});

describe("the registry with MCP tools", () => {
  test("they follow the built-in tools, are not strict, and only an object is checked before the server sees the arguments", async () => {
    const root = await makeTempDir();
    const seen: Array<Record<string, unknown>> = [];
    const handle: McpServerHandle = {
      name: "srv",
      allowed: true,
      callTool: async (tool, args) => {
        seen.push(args);
        return { forModel: `${tool} ok`, summary: "ok", isError: false };
      },
    };
    const schema = { type: "object", properties: { n: { type: "integer", format: "int64" } }, required: ["n"], additionalProperties: false };
    const tool = createMcpTool(handle, { name: "count", inputSchema: schema }, "mcp__srv__count");
    const registry = createToolRegistry({ root, settings: { approvals: "suggest", toolOutputTokens: 2000, shellTimeoutMs: 1000 }, extraTools: [tool] });
    const specs = registry.specs();
    expect(specs.at(-1)).toEqual({ type: "function", name: "mcp__srv__count", description: 'The count tool of the MCP server "srv".', parameters: { ...schema }, strict: false });
    expect(specs.at(-2)?.name).toBe("recall_turn");

    const signal = new AbortController().signal;
    const ok = await registry.run({ callId: "a", name: "mcp__srv__count", arguments: '{"n":"not checked here"}' }, { signal });
    expect(ok).toMatchObject({ forModel: "count ok", kind: "external", isError: false, denied: false });
    expect(seen).toEqual([{ n: "not checked here" }]);
    const bad = await registry.run({ callId: "b", name: "mcp__srv__count", arguments: "[1]" }, { signal });
    expect(bad.isError).toBe(true);
    expect(bad.forModel).toContain("Invalid arguments for mcp__srv__count");
  });
});

describe("settings", () => {
  let saved: string | undefined;
  let root: string;
  let config: string;
  beforeEach(async () => {
    saved = process.env.XDG_CONFIG_HOME;
    root = await makeTempDir();
    config = await makeTempDir();
    process.env.XDG_CONFIG_HOME = config;
  });
  afterEach(() => {
    if (saved === undefined) delete process.env.XDG_CONFIG_HOME;
    else process.env.XDG_CONFIG_HOME = saved;
  });
  const write = (file: string, value: unknown): void => {
    mkdirSync(join(file, ".."), { recursive: true });
    writeFileSync(file, JSON.stringify(value));
  };

  test("a trusted project's servers join the user's; a name the user uses stays the user's; its mcp options are ignored", () => {
    write(join(config, "valarmind", "config.json"), { mcpServers: { shared: { command: "mine" } }, mcp: { allow: ["shared"] } });
    write(join(root, ".valarmind", "config.json"), { mcpServers: { shared: { command: "theirs" }, extra: { url: "https://x.example/mcp" } }, mcp: { allow: ["extra"] } });
    const trusted = resolveSettings(root, {}, { trusted: true }).settings;
    expect(trusted.mcpServers).toEqual({ shared: { command: "mine" }, extra: { url: "https://x.example/mcp" } });
    expect(trusted.mcp).toEqual({ allow: ["shared"] });

    const untrusted = resolveSettings(root, {}, { trusted: false });
    expect(untrusted.settings.mcpServers).toEqual({ shared: { command: "mine" } });
    expect(untrusted.project?.ignored.map((change) => change.key)).toEqual(["mcpServers"]);
  });
});

describe("connecting", () => {
  test("the tools filter and the token cap decide what is offered, with a notice for what is left out", async () => {
    const root = await makeTempDir();
    const count = await loadTokenizer();
    const servers = { echo: { command: process.execPath, args: [ECHO_SERVER], tools: ["echo", "add", "missing"] } };
    const all = await connectMcpServers({ servers, options: {}, cwd: root, count, toolTokenCap: 10_000 });
    try {
      expect(all.tools.map((t) => t.name)).toEqual(["mcp__echo__add", "mcp__echo__echo"]);
      expect(all.takeNotices()).toEqual([{ message: 'MCP server "echo" has no tool named "missing" (its "tools" entry names them)' }]);
    } finally {
      await all.close();
    }
    const addCost = await countTokens(JSON.stringify(createToolRegistry({ root, settings: { approvals: "suggest", toolOutputTokens: 2000, shellTimeoutMs: 1000 }, tools: [], extraTools: all.tools.slice(0, 1) }).specs()[0]));
    const capped = await connectMcpServers({ servers, options: {}, cwd: root, count, toolTokenCap: addCost });
    try {
      expect(capped.tools.map((t) => t.name)).toEqual(["mcp__echo__add"]);
      const notices = capped.takeNotices();
      expect(notices.find((n) => n.code === "mcp_tools_left_out")?.message).toStartWith(`1 MCP tool(s) were not offered (mcp__echo__echo): MCP tool definitions may take at most ${addCost} tokens`);
    } finally {
      await capped.close();
    }
  });

  test("a server that does not answer in time is a notice, and its process is ended", async () => {
    const root = await makeTempDir();
    const started = performance.now();
    const set = await connectMcpServers({ servers: { slow: { command: "sleep", args: ["29.4321"] } }, options: { startupTimeoutMs: 300 }, cwd: root, count: () => 1, toolTokenCap: 1000 });
    expect(performance.now() - started).toBeLessThan(5000);
    expect(set.tools).toEqual([]);
    expect(set.takeNotices()).toEqual([
      {
        message: 'MCP server "slow" did not start: it did not answer within 300 ms (raise "mcp": { "startupTimeoutMs": … } in your user config if it is just slow); its tools are not available this session',
        code: "mcp_server_failed",
      },
    ]);
    expect(Bun.spawnSync(["pgrep", "-f", "^sleep 29.4321$"]).stdout.toString().trim()).toBe("");
  });
});
