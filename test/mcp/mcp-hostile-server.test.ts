/**
 * An MCP server is third-party code the user configured: valarmind treats what it sends as
 * hostile. These tests start `test/mcp/fixtures/hostile-server.ts` (JSON-RPC over stdio written by
 * hand, so it can break the protocol) and drive an AgentSession against the fake Responses server.
 * For each kind of misbehaviour they check that the session keeps working, a notice or an error
 * names the server, nothing hangs (small timeouts through the config), what reaches the model and
 * the transcript stays bounded, and no server process is left behind.
 *
 * The comment above a test that once was a `test.todo` (a bug this suite found) says what was
 * wrong and what happens now.
 */
import { afterAll, afterEach, beforeEach, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import Ajv2020 from "ajv/dist/2020.js";
import type { AgentEvent } from "../../src/agent/events.ts";
import { AgentSession } from "../../src/agent/session.ts";
import type { Settings } from "../../src/config/settings-schema.ts";
import type { McpOptions, McpServerConfig } from "../../src/mcp/mcp-config.ts";
import { MAX_DESCRIPTION_CHARS, MAX_RESULT_BYTES } from "../../src/mcp/mcp-tool.ts";
import { startMcpServers, type McpToolSet } from "../../src/mcp/start-servers.ts";
import { toolSpecs } from "../../src/tools/registry.ts";
import { fixedRequestTokens, mcpToolTokenCap } from "../../src/mcp/tool-budget.ts";
import { countTokens, loadTokenizer } from "../../src/tokens/tokenizer.ts";
import { cleanupTempDirs, makeTempDir } from "../support/cli.ts";
import {
  httpError,
  startFakeResponsesServer,
  textStream,
  toolCallStream,
  toolNames,
  toolOutputsThisTurn,
  type FakeResponsesServer,
  type FakeToolCall,
} from "../support/fake-responses-server.ts";
import { fakeModel, makeGitWorkspace, manifests, recordsOf, runTurn, testSettings, type TurnResult } from "../agent/support/agent-harness.ts";

const HOSTILE = resolve(import.meta.dir, "fixtures/hostile-server.ts");
const ECHO = resolve(import.meta.dir, "../fixtures/mcp/echo-server.ts");
/** What the OpenAI API accepts as a function name. */
const API_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const MB = 1024 * 1024;

const hostile = (preset: string, env: Record<string, string> = {}): McpServerConfig => ({ command: process.execPath, args: [HOSTILE, preset], env });
const echo = (): McpServerConfig => ({ command: process.execPath, args: [ECHO] });

interface Notice {
  message: string;
  code?: string | undefined;
}

interface Opened {
  session: AgentSession;
  mcp: McpToolSet;
  root: string;
  /** The notices the session opened with (servers that did not start, tools left out). */
  notices: Notice[];
}

let server: FakeResponsesServer;
let opened: Opened[] = [];

beforeEach(() => {
  server = startFakeResponsesServer();
  opened = [];
});
afterEach(async () => {
  for (const { session, mcp } of opened) {
    await session.close();
    await mcp.close();
  }
  await server.close();
});
afterAll(cleanupTempDirs);

/**
 * Starts `servers` (all allowed: no approval is asked) and opens a headless session on them.
 * `mcp` options default to a 5 s startup and a 10 s call limit; tests about time set their own.
 */
async function open(servers: Record<string, McpServerConfig>, options: { mcp?: McpOptions; settings?: Partial<Settings> } = {}): Promise<Opened> {
  const root = await makeGitWorkspace({ "README.md": "# demo\n" });
  const settings = testSettings({
    ...options.settings,
    mcpServers: servers,
    mcp: { allow: Object.keys(servers), startupTimeoutMs: 5000, callTimeoutMs: 10_000, ...options.mcp },
  });
  const mcp = await startMcpServers(settings, root);
  const session = await AgentSession.open({ root, settings, model: fakeModel(server), interactive: false, resume: { kind: "new" }, mcp });
  const handle = { session, mcp, root, notices: session.openNoticeEvents.map((n) => ({ message: n.message, code: n.code })) };
  opened.push(handle);
  return handle;
}

/** One turn in which the model makes `calls` (each list one step), then answers "done". */
async function callTurn(session: AgentSession, ...steps: FakeToolCall[][]): Promise<TurnResult> {
  server.enqueue(...steps.map((calls) => toolCallStream(calls)), textStream("done"));
  return runTurn(session, "use the MCP tools");
}

/** The function outputs the last request carried for this turn, by call id. */
function outputsByCall(): Map<string, string> {
  const body = server.requests.at(-1)?.body ?? {};
  return new Map(toolOutputsThisTurn(body).map((item) => [item.call_id ?? "", item.output ?? ""]));
}

function noticesOf(events: readonly AgentEvent[]): Notice[] {
  return events.flatMap((e) => (e.type === "notice" ? [{ message: e.message, code: e.code }] : []));
}

const mcpNames = (body: Record<string, unknown>): string[] => toolNames(body).filter((name) => name.startsWith("mcp__"));

/** Running, and not a zombie (as in mcp-chat.test.ts). */
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

async function gone(pid: number): Promise<boolean> {
  for (let i = 0; i < 40 && alive(pid); i++) await Bun.sleep(50);
  return !alive(pid);
}

describe("tool definitions that would blow the request budget", () => {
  test("500 tools in one page: the MCP definitions stay within a quarter of maxContextTokens, the request within the budget, and a notice tells what was left out", async () => {
    const { session, notices } = await open({ h: hostile("many") });
    const turn = await callTurn(session, [{ name: "mcp__h__t000", arguments: {}, callId: "c1" }]);
    expect(turn.stopReason).toBe("completed");
    expect(outputsByCall().get("c1")).toBe("ok: t000");

    const body = server.requests[0]?.body ?? {};
    const offered = mcpNames(body);
    expect(offered.length).toBeGreaterThan(0);
    expect(offered.length).toBeLessThan(500);
    // A stable prefix of the sorted list: the cached prompt prefix holds across sessions.
    expect(offered).toEqual(offered.map((_, i) => `mcp__h__t${String(i).padStart(3, "0")}`));

    const manifest = (await manifests(session))[0];
    if (!manifest) throw new Error("no manifest was written");
    const mcpTokens = manifest.items.filter((item) => item.id.startsWith("tool:mcp__")).reduce((sum, item) => sum + item.tokens, 0);
    expect(mcpTokens).toBeLessThanOrEqual(Math.floor(manifest.budget_tokens / 4));
    expect(manifest.total_tokens).toBeLessThanOrEqual(manifest.budget_tokens);
    expect(manifest.budget_tokens).toBe(24_000);

    const leftOut = notices.filter((n) => n.code === "mcp_tools_left_out").map((n) => n.message);
    // The first 200 by name are kept (a notice says so); those past the token cap are named.
    expect(leftOut).toContainEqual(expect.stringContaining(`${200 - offered.length} MCP tool(s) were not offered (mcp__h__t${String(offered.length).padStart(3, "0")}`));
    expect(leftOut).toContainEqual('MCP server "h" lists 500 tools; only the first 200 by name were kept');
  });

  test("500 tools over many pages: only the first 200 are read, whatever the budget, with a notice", async () => {
    const { session, notices } = await open({ h: hostile("paged") }, { settings: { maxContextTokens: 200_000 } });
    server.enqueue(textStream("hi"));
    expect((await runTurn(session, "hi")).stopReason).toBe("completed");
    expect(mcpNames(server.requests[0]?.body ?? {})).toHaveLength(200);
    expect(notices).toContainEqual({ code: "mcp_tools_left_out", message: 'MCP server "h" lists more than 200 tools; only the first 200 were read' });
  });

  // Was a bug: MAX_TOOLS_PER_SERVER (200) only stopped *pagination*, so a server returning 500
  // tools in one tools/list page had all 500 offered when the budget fitted them, while the notice
  // said "only the first 200 were read". Now (src/mcp/mcp-servers.ts, serverTools) the tools are
  // sorted by name and cut to the first 200, and the notice says exactly that.
  test("500 tools in one page are cut to the first 200 by name, as the notice says", async () => {
    const { session, notices } = await open({ h: hostile("many") }, { settings: { maxContextTokens: 100_000 } });
    server.enqueue(textStream("hi"));
    expect((await runTurn(session, "hi")).stopReason).toBe("completed");
    expect(notices).toEqual([{ code: "mcp_tools_left_out", message: 'MCP server "h" lists 500 tools; only the first 200 by name were kept' }]);
    const offered = mcpNames(server.requests[0]?.body ?? {});
    expect(offered).toEqual(Array.from({ length: 200 }, (_, i) => `mcp__h__t${String(i).padStart(3, "0")}`));
  });

  test("a 200 KB description is cut to 2,048 characters", async () => {
    const { session, notices } = await open({ h: hostile("huge-desc") });
    server.enqueue(textStream("hi"));
    expect((await runTurn(session, "hi")).stopReason).toBe("completed");
    const tools = (server.requests[0]?.body.tools ?? []) as Array<{ name: string; description: string }>;
    const long = tools.find((t) => t.name === "mcp__h__a_long");
    expect(long?.description.length).toBe(MAX_DESCRIPTION_CHARS);
    expect(long?.description).toStartWith("Long. ddd");
    expect(long?.description).toEndWith("…");
    expect(mcpNames(server.requests[0]?.body ?? {})).toEqual(["mcp__h__a_long", "mcp__h__b_small"]);
    expect(notices).toEqual([]);
    expect(server.requests[0]?.raw.length ?? Infinity).toBeLessThan(100_000);
  });

  test("a tool with a 200 KB inputSchema is not offered (a notice names it), and the request stays within the budget", async () => {
    const { session, notices } = await open({ h: hostile("huge-schema") });
    server.enqueue(textStream("hi"));
    expect((await runTurn(session, "hi")).stopReason).toBe("completed");
    const body = server.requests[0]?.body ?? {};
    expect(mcpNames(body)).not.toContain("mcp__h__a_huge");
    expect(server.requests[0]?.raw.length ?? Infinity).toBeLessThan(100_000);
    const manifest = (await manifests(session))[0];
    expect(manifest?.total_tokens ?? Infinity).toBeLessThanOrEqual(manifest?.budget_tokens ?? 0);
    expect(notices).toContainEqual(expect.objectContaining({ code: "mcp_tools_left_out", message: expect.stringContaining("mcp__h__a_huge") }));
  });

  // Was a bug: once one tool did not fit the token cap, every tool after it was left out too (the
  // rest of its server's and every later server's). Now (src/mcp/mcp-servers.ts, offeredTools) only
  // the tool that does not fit is skipped; the order is still deterministic, so the cached prefix
  // holds across sessions.
  test("an oversized tool does not take the tools after it (on its own server or others) with it", async () => {
    const { session, notices } = await open({ h: hostile("huge-schema"), zz: echo() });
    server.enqueue(textStream("hi"));
    expect((await runTurn(session, "hi")).stopReason).toBe("completed");
    const offered = mcpNames(server.requests[0]?.body ?? {});
    expect(offered).not.toContain("mcp__h__a_huge");
    expect(offered).toEqual(expect.arrayContaining(["mcp__h__b_small", "mcp__h__c_small", "mcp__zz__echo", "mcp__zz__add"]));
    expect(notices).toContainEqual(expect.objectContaining({ code: "mcp_tools_left_out", message: expect.stringContaining("1 MCP tool(s) were not offered (mcp__h__a_huge)") }));
  });

  // Was a bug: the cap was a quarter of the budget whatever the fixed part of every request (core
  // rules and built-in tools, ~1,900 tokens) already took, so at maxContextTokens 2400 (where a
  // session without MCP works) 600 tokens of MCP definitions made *every* turn fail with a budget
  // error that never mentioned MCP. Now (src/mcp/tool-budget.ts) the cap is
  // min(budget / 4, budget − the fixed part − 512 tokens of room for the message): here next to
  // nothing, so the tools are left out with a notice and the turn works.
  test("MCP tools never turn a budget that works without them into a failing turn", async () => {
    const { session, notices } = await open({ h: hostile("many") }, { settings: { maxContextTokens: 2400 } });
    const fixed = fixedRequestTokens(await loadTokenizer());
    expect(fixed).toBeGreaterThan(1500);
    expect(notices).toContainEqual(expect.objectContaining({ code: "mcp_tools_left_out", message: expect.stringContaining(`MCP tool definitions may take at most ${mcpToolTokenCap(2400, fixed)} tokens`) }));
    server.enqueue(textStream("hi"));
    const turn = await runTurn(session, "hi");
    expect(turn.events.filter((e) => e.type === "error")).toEqual([]);
    expect(turn.stopReason).toBe("completed");
    const manifest = (await manifests(session))[0];
    expect(manifest?.total_tokens ?? Infinity).toBeLessThanOrEqual(2400);
  });
});

describe("tool names", () => {
  test("odd, long, clashing and built-in-like names: every offered name is valid for the API and unique, no built-in tool is shadowed, each routes to its own tool", async () => {
    const { session, notices } = await open({
      h: hostile("names"),
      // mcp__a__b__c twice: server "a"'s tool "b__c" and server "a__b"'s tool "c".
      a: hostile("custom", { HOSTILE_TOOLS: JSON.stringify(["b__c"]) }),
      a__b: hostile("custom", { HOSTILE_TOOLS: JSON.stringify(["c"]) }),
    });
    expect(notices).toEqual([]);
    server.enqueue(textStream("hi"));
    expect((await runTurn(session, "hi")).stopReason).toBe("completed");

    const body = server.requests[0]?.body ?? {};
    const names = toolNames(body);
    for (const name of names) expect(name).toMatch(API_NAME);
    expect(new Set(names).size).toBe(names.length);
    // The built-in tools come first, exactly as without MCP.
    const builtIn = toolSpecs();
    const specs = (body.tools ?? []) as Array<Record<string, unknown>>;
    expect(specs.slice(0, builtIn.length).map((s) => s.name)).toEqual(builtIn.map((s) => s.name));
    expect(names.slice(builtIn.length).every((name) => name.startsWith("mcp__"))).toBe(true);
    // 14 tools of "names" (two named "dup"), one each of "a" and "a__b".
    expect(names.length - builtIn.length).toBe(16);
    expect(names).toContain("mcp__a__b__c");
    expect(names.filter((name) => /^mcp__a__b__c_[0-9a-f]{8}$/.test(name))).toHaveLength(1);

    // Each offered name reaches the tool the server listed under its own name. Sorted by code
    // units, "read file" comes first and keeps the plain name; read.file, read/file and read_file
    // itself end with a hash of their own names.
    const readFileLike = names.filter((name) => name.startsWith("mcp__h__read_file"));
    expect(readFileLike).toHaveLength(4);
    const clash = names.find((name) => /^mcp__a__b__c_[0-9a-f]{8}$/.test(name)) ?? "missing";
    const unicode = names.filter((name) => /^mcp__h___+$/.test(name)); // "", ファイル, 📁
    expect(unicode).toHaveLength(3);
    const turn = await callTurn(session, [
      ...readFileLike.map((name, i) => ({ name, arguments: {}, callId: `r${i}` })),
      ...unicode.map((name, i) => ({ name, arguments: {}, callId: `u${i}` })),
      { name: "mcp__h__run_shell", arguments: {}, callId: "shell" },
      { name: "mcp__h__mcp__other__tool", arguments: {}, callId: "other" },
      { name: "mcp__a__b__c", arguments: {}, callId: "a" },
      { name: clash, arguments: {}, callId: "ab" },
      { name: "read_file", arguments: { path: "README.md" }, callId: "builtin" },
    ]);
    expect(turn.stopReason).toBe("completed");
    const out = outputsByCall();
    expect(readFileLike.map((_, i) => out.get(`r${i}`)).sort()).toEqual(["ok: read file", "ok: read.file", "ok: read/file", "ok: read_file"]);
    expect(out.get("r0")).toBe("ok: read file");
    expect(unicode.map((_, i) => out.get(`u${i}`)).sort()).toEqual(["ok: ", "ok: ファイル", "ok: 📁"]);
    expect(out.get("shell")).toBe("ok: run_shell");
    expect(out.get("other")).toBe("ok: mcp__other__tool");
    expect(out.get("a")).toBe("ok: b__c");
    expect(out.get("ab")).toBe("ok: c");
    // The built-in read_file is still valarmind's own.
    expect(out.get("builtin")).toContain("# demo");
  });
});

describe("input schemas", () => {
  test("$ref loops and a dangling $ref in an object schema: passed through unchanged, nothing loops, the server's tools work", async () => {
    const { session, notices } = await open({ h: hostile("refs") });
    // Only "nonsense" (no valid JSON Schema: the next test) is left out.
    expect(notices.map((n) => n.message)).toEqual([expect.stringContaining('("nonsense": ')]);
    const turn = await callTurn(session, [
      { name: "mcp__h__loop", arguments: { node: { node: {} } }, callId: "l" },
      { name: "mcp__h__dangling", arguments: { x: 1 }, callId: "d" },
      { name: "mcp__h__ok_tool", arguments: { text: "hi" }, callId: "o" },
    ]);
    expect(turn.stopReason).toBe("completed");
    const tools = (server.requests[0]?.body.tools ?? []) as Array<{ name: string; parameters: unknown; strict: boolean }>;
    const loop = tools.find((t) => t.name === "mcp__h__loop");
    expect(loop).toMatchObject({
      strict: false,
      parameters: { type: "object", properties: { node: { $ref: "#/$defs/a" } }, $defs: { a: { $ref: "#/$defs/b" }, b: { $ref: "#/$defs/a" } } },
    });
    expect(outputsByCall()).toEqual(
      new Map([
        ["l", "ok: loop"],
        ["d", "ok: dangling"],
        ["o", "ok: ok_tool"],
      ]),
    );
  });

  // Was a bug: an inputSchema that is an object schema at the top but no valid JSON Schema inside
  // ({"type":"no-such-type"}, "minimum":"ten", "additionalProperties":5, a repeated "required"
  // entry) was sent as the function's parameters, and the OpenAI API answers such a request with
  // 400 invalid_function_parameters — every request, so every turn failed. (The fake API here
  // answers like that.) Now (src/mcp/tool-checks.ts, checkTool) each inputSchema is checked
  // against the JSON Schema meta-schema (ajv, draft 2020-12 or draft-07) when listing; a bad tool
  // is left out with a notice naming the server, the tool and the problem.
  test("an inputSchema that is not valid JSON Schema is left out with a notice; the server's other tools still work", async () => {
    const ajv = new Ajv2020({ strict: false });
    server.setResponder((body) => {
      const tools = (body.tools ?? []) as Array<{ name: string; parameters?: unknown }>;
      const bad = tools.findIndex((tool) => !ajv.validateSchema(tool.parameters as object));
      if (bad >= 0) {
        const name = tools[bad]?.name ?? "";
        return httpError(400, { message: `Invalid schema for function '${name}'`, type: "invalid_request_error", code: "invalid_function_parameters", param: `tools[${bad}].parameters` });
      }
      return body.input !== undefined && JSON.stringify(body.input).includes("function_call_output") ? textStream("done") : toolCallStream([{ name: "mcp__h__ok_tool", arguments: {}, callId: "o" }]);
    });
    const { session, notices } = await open({ h: hostile("refs") });
    expect(notices).toEqual([
      {
        code: "mcp_tools_left_out",
        message: expect.stringMatching(/^MCP server "h": 1 tool\(s\) not offered, their definitions are invalid \("nonsense": its inputSchema is not valid JSON Schema: \/\S+ must /),
      },
    ]);
    const turn = await runTurn(session, "use it");
    expect(turn.stopReason).toBe("completed");
    expect(mcpNames(server.requests[0]?.body ?? {})).not.toContain("mcp__h__nonsense");
    expect(outputsByCall().get("o")).toBe("ok: ok_tool");
  });

  // Was left out: a draft-04 inputSchema (boolean exclusiveMinimum beside minimum, `id`) is no
  // valid draft 2020-12 or draft-07, so the tool was not offered. Now it is rewritten as draft
  // 2020-12 (json-schema-migrate; src/mcp/tool-checks.ts, migratedSchema) and offered.
  test("draft-04 input schemas, declared or not, are rewritten as draft 2020-12 and offered; the API takes them and calls work", async () => {
    const ajv = new Ajv2020({ strict: false });
    server.setResponder((body) => {
      const tools = (body.tools ?? []) as Array<{ name: string; parameters?: unknown }>;
      const bad = tools.findIndex((tool) => !ajv.validateSchema(tool.parameters as object));
      if (bad >= 0) return httpError(400, { message: `Invalid schema for function '${tools[bad]?.name ?? ""}'`, type: "invalid_request_error", code: "invalid_function_parameters", param: `tools[${bad}].parameters` });
      return JSON.stringify(body.input ?? "").includes("function_call_output") ? textStream("done") : toolCallStream([{ name: "mcp__h__old_range", arguments: { n: 5 }, callId: "r" }]);
    });
    const { session, notices } = await open({ h: hostile("draft-04") });
    expect(notices).toEqual([]);
    const turn = await runTurn(session, "use it");
    expect(turn.stopReason).toBe("completed");
    const tools = (server.requests[0]?.body.tools ?? []) as Array<{ name: string; parameters: Record<string, unknown> }>;
    expect(mcpNames(server.requests[0]?.body ?? {})).toEqual(["mcp__h__ok_tool", "mcp__h__old_range", "mcp__h__undeclared"]);
    for (const name of ["mcp__h__old_range", "mcp__h__undeclared"]) {
      const parameters = tools.find((t) => t.name === name)?.parameters;
      expect(parameters?.properties).toEqual({ n: { type: "integer", exclusiveMinimum: 1, exclusiveMaximum: 10 } });
      expect(parameters).not.toHaveProperty("$schema");
      expect(parameters).not.toHaveProperty("id");
    }
    expect(outputsByCall().get("r")).toBe("ok: old_range");
  });

  test("a tool definition the SDK rejects (an inputSchema that is not an object schema, an outputSchema that does not compile): a notice names the server, the session and other servers work", async () => {
    for (const preset of ["not-object", "bad-output"]) {
      const { session, notices } = await open({ h: hostile(preset), zz: echo() });
      expect(notices.some((n) => n.message.includes('MCP server "h"'))).toBe(true);
      server.enqueue(toolCallStream([{ name: "mcp__zz__echo", arguments: { text: preset }, callId: "e" }]), textStream("done"));
      expect((await runTurn(session, "echo")).stopReason).toBe("completed");
      expect(outputsByCall().get("e")).toBe(`echo: ${preset}`);
    }
  });

  // Was a bug, two parts. (1) One bad tool took the whole server down: the SDK's Client.listTools
  // validates the whole tools/list result (inputSchema.type must be "object") and compiles every
  // outputSchema, and either throwing failed the server. Now (src/mcp/mcp-servers.ts, connectOne)
  // tools are listed with a lenient result schema and checked one by one (src/mcp/tool-checks.ts):
  // only the bad one is left out, with a notice naming it and why. (2) The notice gave the wrong
  // reason ("the process exited with code 0"): the transport was closed before the reason was
  // worked out, so the exit valarmind caused hid the real error. Now the reason comes first.
  test("a tool definition the SDK rejects leaves the server's other tools offered, with a notice naming the bad tool", async () => {
    const expected: Record<string, string> = {
      "not-object": 'MCP server "h": 1 tool(s) not offered, their definitions are invalid ("b_string": its inputSchema is not an object schema (type "string"))',
      "bad-output": 'MCP server "h": 1 tool(s) not offered, their definitions are invalid ("b_output": its outputSchema is not valid JSON Schema: ',
    };
    for (const preset of ["not-object", "bad-output"]) {
      const { session, notices } = await open({ h: hostile(preset) });
      expect(notices).toEqual([{ code: "mcp_tools_left_out", message: expect.stringContaining(expected[preset] ?? "missing") }]);
      server.enqueue(textStream("hi"));
      expect((await runTurn(session, "hi")).stopReason).toBe("completed");
      expect(mcpNames(server.requests.at(-1)?.body ?? {})).toEqual(["mcp__h__a_good", "mcp__h__c_good"]);
    }
  });
});

describe("results", () => {
  test("a 5 MB text result: the model gets toolOutputTokens of its head and tail, the transcript at most 256 KiB, the turn goes on", async () => {
    const { session } = await open({ h: hostile("calls") });
    const turn = await callTurn(session, [{ name: "mcp__h__huge", arguments: { mb: 5 }, callId: "big" }], [{ name: "mcp__h__echo", arguments: { text: "next" }, callId: "after" }]);
    expect(turn.stopReason).toBe("completed");
    const out = outputsByCall();
    const big = out.get("big") ?? "";
    expect(big).toStartWith("HEAD\n");
    expect(big).toEndWith("\nTAIL");
    expect(await countTokens(big)).toBeLessThanOrEqual(2000);
    expect(out.get("after")).toBe("echo: next");
    // The transcript keeps the bounded result (head and tail of 256 KiB), not 5 MB.
    const record = recordsOf(session, "tool_call").find((r) => r.call_id === "big");
    expect(record?.output).toBe(big);
    expect(Buffer.byteLength(record?.raw ?? "")).toBeLessThan(MAX_RESULT_BYTES + 200);
    expect(record?.raw).toContain("bytes of this result in the middle were not kept");
    expect(record?.raw).toEndWith("\nTAIL");
    for (const request of server.requests) expect(request.raw.length).toBeLessThan(200_000);
  });

  test("a result with no text (a 3 MB image, audio, a blob, a link) is described in a few lines; no data reaches the model", async () => {
    const { session } = await open({ h: hostile("calls") });
    expect((await callTurn(session, [{ name: "mcp__h__binary", arguments: {}, callId: "b" }])).stopReason).toBe("completed");
    expect(outputsByCall().get("b")).toBe(
      [
        "[image: image/png, 3145728 bytes; not shown, valarmind passes text only]",
        "[audio: audio/wav, 3 bytes; not shown, valarmind passes text only]",
        "[resource file:///blob.bin: application/octet-stream, 3 bytes of binary data; not shown]",
        "[resource link: linked.md <file:///linked.md>]",
      ].join("\n"),
    );
    expect(recordsOf(session, "tool_call")[0]?.raw).toBeUndefined();
    for (const request of server.requests) expect(request.raw.length).toBeLessThan(100_000);
  });

  test("a JSON-RPC error with a 5 MB message: the model gets a bounded error naming the server and the tool", async () => {
    const { session } = await open({ h: hostile("calls") });
    const turn = await callTurn(session, [{ name: "mcp__h__rpc_error", arguments: { mb: 5 }, callId: "e" }, { name: "mcp__h__echo", arguments: { text: "still" }, callId: "s" }]);
    expect(turn.stopReason).toBe("completed");
    const error = outputsByCall().get("e") ?? "";
    expect(error).toStartWith('Error: calling rpc_error on the MCP server "h" failed: MCP error -32000: BEGIN rrr');
    expect(await countTokens(error)).toBeLessThanOrEqual(2000);
    expect(outputsByCall().get("s")).toBe("echo: still");
    for (const request of server.requests) expect(request.raw.length).toBeLessThan(100_000);
  });

  // Was a bug: a failed request's message was used unbounded, so a 5 MB JSON-RPC error message
  // went whole into the transcript's `raw` and into the one-line `summary` of tool_call_end. Now
  // (src/mcp/mcp-servers.ts, serverHandle's callTool) it is bounded like a result (256 KiB, head
  // and tail) and the summary keeps 80 characters of its first line.
  test("a JSON-RPC error with a 5 MB message is bounded in the transcript and in the one-line summary", async () => {
    const { session } = await open({ h: hostile("calls") });
    const turn = await callTurn(session, [{ name: "mcp__h__rpc_error", arguments: { mb: 5 }, callId: "e" }]);
    const end = turn.events.find((e) => e.type === "tool_call_end");
    expect(end?.type === "tool_call_end" ? end.summary : "").toStartWith("h/rpc_error failed: MCP error -32000: BEGIN rrr");
    expect(end?.type === "tool_call_end" ? end.summary.length : Infinity).toBeLessThan(200);
    const raw = recordsOf(session, "tool_call")[0]?.raw ?? "";
    expect(Buffer.byteLength(raw)).toBeLessThan(MAX_RESULT_BYTES + 200);
    expect(raw).toContain("bytes of this result in the middle were not kept");
    expect(raw).toEndWith(" END");
  });

  test("one message over the 10 MB read buffer: the call ends with an error naming the server, it is stopped, later calls are told so, the turn goes on", async () => {
    const { session, mcp } = await open({ h: hostile("calls") });
    const started = performance.now();
    const turn = await callTurn(session, [{ name: "mcp__h__too_big", arguments: {}, callId: "t" }], [{ name: "mcp__h__echo", arguments: { text: "x" }, callId: "e" }]);
    expect(performance.now() - started).toBeLessThan(8000);
    expect(turn.stopReason).toBe("completed");
    const out = outputsByCall();
    expect(out.get("t")).toStartWith('Error: the MCP server "h" is not running');
    expect(out.get("e")).toStartWith('Error: the MCP server "h" is not running');
    expect(noticesOf(turn.events)).toContainEqual(expect.objectContaining({ code: "mcp_server_failed", message: expect.stringContaining('MCP server "h" stopped') }));
    expect(mcp.takeNotices()).toEqual([]);
    server.enqueue(textStream("fine"));
    expect((await runTurn(session, "hi")).text).toBe("fine");
  });

  // Was a bug: when a message exceeded the 10 MB read buffer the transport told only onerror
  // (nobody listens) and closed the server, and the notice described the exit valarmind itself
  // caused ("its process exited with code 0"). Now (src/mcp/stdio-transport.ts, closedBecause) the
  // transport remembers why it ended the server, and the notice and the model's error say so.
  test("the notice for a server ended over an oversized message says so", async () => {
    const { session } = await open({ h: hostile("calls") });
    const turn = await callTurn(session, [{ name: "mcp__h__too_big", arguments: {}, callId: "t" }]);
    const notice = noticesOf(turn.events).find((n) => n.code === "mcp_server_failed")?.message ?? "";
    expect(notice).toBe(
      'MCP server "h" stopped (it sent a message over valarmind\'s limit of 10 MB for one message, so valarmind stopped it); its tools answer with an error for the rest of this session',
    );
    expect(outputsByCall().get("t")).toStartWith('Error: the MCP server "h" is not running (it sent a message over valarmind\'s limit of 10 MB');
  });
});

describe("calls that misbehave", () => {
  test("a call that never answers ends after callTimeoutMs with an error naming the server and the limit; the server's other tools still work", async () => {
    const { session } = await open({ h: hostile("calls") }, { mcp: { callTimeoutMs: 300 } });
    const started = performance.now();
    const turn = await callTurn(session, [{ name: "mcp__h__hang", arguments: {}, callId: "h" }], [{ name: "mcp__h__echo", arguments: { text: "after" }, callId: "e" }]);
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(300);
    expect(elapsed).toBeLessThan(5000);
    expect(turn.stopReason).toBe("completed");
    const out = outputsByCall();
    expect(out.get("h")).toBe(
      'Error: calling hang on the MCP server "h" failed: MCP error -32001: Request timed out (the limit is 300 ms: "mcp": { "callTimeoutMs": … } in the user config)',
    );
    expect(out.get("e")).toBe("echo: after");
    // Later turns call it as usual.
    expect((await callTurn(session, [{ name: "mcp__h__echo", arguments: { text: "later" }, callId: "l" }])).stopReason).toBe("completed");
    expect(outputsByCall().get("l")).toBe("echo: later");
  });

  test("a server that exits in the middle of a call, after half a message: an error naming it, a notice, no hang; later turns work without it", async () => {
    const pidFile = join(await makeTempDir(), "pid");
    const { session } = await open({ h: hostile("calls", { HOSTILE_PID_FILE: pidFile }), zz: echo() });
    const started = performance.now();
    const turn = await callTurn(session, [{ name: "mcp__h__crash", arguments: {}, callId: "c" }], [{ name: "mcp__h__echo", arguments: { text: "x" }, callId: "e" }]);
    expect(performance.now() - started).toBeLessThan(5000);
    expect(turn.stopReason).toBe("completed");
    const out = outputsByCall();
    expect(out.get("c")).toStartWith('Error: the MCP server "h" is not running (its process exited with code 5; its stderr ended with: hostile: crashing mid-call)');
    expect(out.get("e")).toStartWith('Error: the MCP server "h" is not running');
    expect(noticesOf(turn.events)).toContainEqual({
      code: "mcp_server_failed",
      message: 'MCP server "h" stopped (its process exited with code 5; its stderr ended with: hostile: crashing mid-call); its tools answer with an error for the rest of this session',
    });
    expect(await gone(Number(readFileSync(pidFile, "utf8")))).toBe(true);

    // The next turn: the other server works; the stopped one answers with an error at once.
    const next = await callTurn(session, [{ name: "mcp__zz__echo", arguments: { text: "ok" }, callId: "z" }, { name: "mcp__h__echo", arguments: { text: "x" }, callId: "h" }]);
    expect(next.stopReason).toBe("completed");
    expect(outputsByCall().get("z")).toBe("echo: ok");
    // (The request may show it as "[identical to the output of call e above]": the transcript has it.)
    expect(recordsOf(session, "tool_call").find((r) => r.call_id === "h")?.output).toStartWith('Error: the MCP server "h" is not running');
    expect(noticesOf(next.events)).toEqual([]);
  });

  test("non-JSON lines, JSON that is not JSON-RPC, a response to an unknown id and requests to the client on stdout: skipped, the answer arrives, later calls work", async () => {
    const { session, notices } = await open({ h: hostile("calls", { HOSTILE_GARBAGE_AT_START: "1" }) });
    expect(notices).toEqual([]);
    const turn = await callTurn(session, [{ name: "mcp__h__garbage", arguments: {}, callId: "g" }], [{ name: "mcp__h__echo", arguments: { text: "clean" }, callId: "e" }]);
    expect(turn.stopReason).toBe("completed");
    expect(outputsByCall()).toEqual(
      new Map([
        ["g", "after garbage"],
        ["e", "echo: clean"],
      ]),
    );
    expect(noticesOf(turn.events)).toEqual([]);
  });

  test("50 MB on stderr at start and 50 MB during a call: the server starts, the call answers, memory stays bounded, a later failure quotes only the end of stderr", async () => {
    Bun.gc(true);
    const heapBefore = process.memoryUsage().heapUsed;
    const { session, notices } = await open({ h: hostile("calls", { HOSTILE_STDERR_AT_START_MB: "50" }) });
    expect(notices).toEqual([]);
    const turn = await callTurn(session, [{ name: "mcp__h__stderr_flood", arguments: { mb: 50 }, callId: "f" }]);
    expect(turn.stopReason).toBe("completed");
    expect(outputsByCall().get("f")).toBe("flooded");
    Bun.gc(true);
    // 100 MB went through stderr; the transport keeps its last 2 KiB.
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(40 * MB);

    const crash = await callTurn(session, [{ name: "mcp__h__stderr_flood", arguments: { mb: 5 }, callId: "f2" }, { name: "mcp__h__crash", arguments: {}, callId: "c" }]);
    const notice = noticesOf(crash.events).find((n) => n.code === "mcp_server_failed")?.message ?? "";
    expect(notice).toContain('MCP server "h" stopped (its process exited with code 5');
    expect(notice).toContain("hostile: crashing mid-call");
    expect(notice.length).toBeLessThan(3000);
    expect((outputsByCall().get("c") ?? "").length).toBeLessThan(3000);
  });

  // tools/list pages are read at most 50 times (src/mcp/mcp-servers.ts, MAX_LIST_PAGES): a server
  // whose pages never end no longer keeps a core busy until startupTimeoutMs.
  test("a server whose tools/list pages never end: reading stops after 50 pages with a notice, well within startupTimeoutMs; the other servers start", async () => {
    const started = performance.now();
    const { session, notices } = await open({ h: hostile("endless"), zz: echo() }, { mcp: { startupTimeoutMs: 5000 } });
    expect(performance.now() - started).toBeLessThan(4000);
    expect(notices).toEqual([{ code: "mcp_tools_left_out", message: 'MCP server "h" sent 50 pages of tools/list and had more; only the 0 tool(s) on those pages were read' }]);
    server.enqueue(textStream("hi"));
    expect((await runTurn(session, "hi")).stopReason).toBe("completed");
    expect(mcpNames(server.requests[0]?.body ?? {})).toEqual(["mcp__zz__add", "mcp__zz__big", "mcp__zz__crash", "mcp__zz__echo", "mcp__zz__env_var", "mcp__zz__fail", "mcp__zz__picture"]);
  });

  test("a server that ignores SIGTERM and its stdin closing is killed when the run ends", async () => {
    const pidFile = join(await makeTempDir(), "pid");
    const { mcp } = await open({ h: hostile("calls", { HOSTILE_STUBBORN: "1", HOSTILE_PID_FILE: pidFile }) });
    const pid = Number(readFileSync(pidFile, "utf8"));
    expect(alive(pid)).toBe(true);
    const started = performance.now();
    // What the run does when it ends (close is idempotent: afterEach calls it again).
    await mcp.close();
    expect(performance.now() - started).toBeLessThan(4000);
    expect(await gone(pid)).toBe(true);
  });
});
