/**
 * `chat -p --output-format text|json|stream-json`, spawned for real against the fake Responses
 * server: json prints exactly one result object (valid against docs/schemas/result.schema.json)
 * on success and on every failure, with today's exit codes; stream-json is --json; bad values
 * are usage errors naming the flag.
 */
import { afterAll, afterEach, beforeEach, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import Ajv2020 from "ajv/dist/2020.js";
import { cleanupTempDirs } from "../support/cli.ts";
import { fixtureError, gatedAfter, startFakeResponsesServer, textStream, toolCallStream, type FakeResponsesServer } from "../support/fake-responses-server.ts";
import { makeGitWorkspace } from "../agent/support/agent-harness.ts";
import { chat, jsonEvents, latestRecords, spawnChat } from "../agent/support/cli-chat.ts";

const ajv = new Ajv2020({ strict: true, allErrors: true });
const validateResult = ajv.compile(JSON.parse(readFileSync(join(import.meta.dir, "../../docs/schemas/result.schema.json"), "utf8")) as object);

let server: FakeResponsesServer;
let root: string;
beforeEach(async () => {
  server = startFakeResponsesServer();
  root = await makeGitWorkspace({ "src/app.ts": "export const port = 4173;\n" });
});
afterEach(async () => {
  await server.close();
});
afterAll(cleanupTempDirs);

/** stdout as exactly one JSON line that the published result schema accepts. */
function oneResult(stdout: string): Record<string, unknown> {
  const lines = stdout.split("\n").filter((line) => line !== "");
  expect(lines).toHaveLength(1);
  const value = JSON.parse(lines[0] ?? "") as Record<string, unknown>;
  if (!validateResult(value)) throw new Error(`result does not match docs/schemas/result.schema.json: ${ajv.errorsText(validateResult.errors)}\n${lines[0]}`);
  return value;
}

describe("--output-format json: one result object", () => {
  test("after tool calls: the final answer, session id, summed usage and the model calls", async () => {
    server.enqueue(toolCallStream([{ name: "read_file", arguments: { path: "src/app.ts" } }], { text: "Reading." }), textStream("Port 4173."));
    const r = await chat(["-p", "which port?", "--output-format", "json"], { cwd: root, server });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
    const result = oneResult(r.stdout);
    const header = readFileSync(latestRecordsFile(), "utf8").split("\n")[0] ?? "";
    expect(result).toMatchObject({
      type: "result",
      v: 1,
      subtype: "success",
      is_error: false,
      result: "Port 4173.",
      stop_reason: "completed",
      error: null,
      session_id: (JSON.parse(header) as { id: string }).id,
      turn: 1,
      num_turns: 2,
      total_cost_usd: null,
      permission_denials: [],
    });
    const usage = result.usage as Record<string, number>;
    expect(usage.requests).toBe(2);
    expect(usage.input_tokens).toBeGreaterThan(0);
    expect(usage.output_tokens).toBeGreaterThan(0);
    expect(usage.cached_tokens).toBeLessThanOrEqual(usage.input_tokens ?? 0);
    expect(typeof result.duration_ms).toBe("number");
  });

  test("a call refused by the approval mode is listed in permission_denials", async () => {
    server.enqueue(toolCallStream([{ name: "write_file", arguments: { path: "notes.md", content: "hi\n" } }]), textStream("I could not write it."));
    const r = await chat(["-p", "write notes", "--output-format", "json"], { cwd: root, server });
    expect(r.code).toBe(0);
    const result = oneResult(r.stdout);
    expect(result.permission_denials).toEqual([{ tool_name: "write_file", tool_use_id: expect.any(String), target: expect.stringContaining("notes.md") }]);
    expect(r.stderr).toContain("write_file: denied");
  });

  test("a model failure: exit 1 as in text mode, is_error with the error's kind and message", async () => {
    server.enqueue(fixtureError("error_401", { status: 401 }));
    const text = await chat(["-p", "hello"], { cwd: root, server });
    server.enqueue(fixtureError("error_401", { status: 401 }));
    const r = await chat(["-p", "hello", "--output-format", "json"], { cwd: root, server });
    expect(r.code).toBe(text.code);
    expect(r.code).toBe(1);
    const result = oneResult(r.stdout);
    expect(result).toMatchObject({ type: "result", subtype: "error_during_execution", is_error: true, stop_reason: "error", error: { kind: "auth" } });
    expect(String((result.error as { message: string }).message)).toContain("401");
    expect(r.stderr).toContain("error:");
  });

  test("a usage error before the turn: exit 2, one object with kind usage and the hint, no session", async () => {
    const r = await chat(["--continue", "-p", "hi", "--output-format", "json"], { cwd: root, server });
    expect(r.code).toBe(2);
    const result = oneResult(r.stdout);
    expect(result).toMatchObject({ is_error: true, subtype: "error_during_execution", stop_reason: null, session_id: null, turn: null, num_turns: 0, result: "" });
    expect(result.error).toMatchObject({ kind: "usage", message: expect.stringContaining("no session to continue"), hint: expect.stringContaining("without --continue") });
    expect(r.stderr).toContain("no session to continue");
    expect(server.requests).toHaveLength(0);
  });

  test("input over the stdin cap: exit 2 and one object saying so", async () => {
    const r = await chat(["-p", "explain", "--output-format", "json"], { cwd: root, server, stdin: "x".repeat(1024 * 1024 + 1) });
    expect(r.code).toBe(2);
    expect(oneResult(r.stdout).error).toMatchObject({ kind: "usage", message: expect.stringContaining("1 MiB") });
  });

  test("SIGINT mid-answer: exit 130, stop_reason aborted, still one object", async () => {
    const { response, gate } = gatedAfter(textStream("partial words then more"), 6);
    server.enqueue(response);
    const child = spawnChat(["-p", "long answer please", "--output-format", "json"], { cwd: root, server });
    await gate.reached; // json prints nothing before the end: wait on the server's side
    child.kill("SIGINT");
    expect(await child.exited).toBe(130);
    gate.release();
    const result = oneResult(await new Response(child.stdout).text());
    expect(result).toMatchObject({ is_error: true, stop_reason: "aborted", error: { kind: "aborted" } });
    expect(latestRecords(root).at(-1)).toMatchObject({ kind: "turn_end", stop_reason: "aborted" });
  });
});

describe("--output-format text and stream-json", () => {
  test("text is the default: the answer alone", async () => {
    server.setResponder(() => textStream("Just the answer."));
    const plain = await chat(["-p", "q"], { cwd: root, server });
    const text = await chat(["-p", "q", "--output-format", "text"], { cwd: root, server });
    expect(text.code).toBe(0);
    expect(text.stdout).toBe("Just the answer.\n");
    expect(text.stdout).toBe(plain.stdout);
  });

  test("stream-json is --json: the same event types, each line versioned", async () => {
    server.setResponder(() => textStream("Same."));
    const legacy = await chat(["-p", "q", "--json"], { cwd: root, server });
    const stream = await chat(["-p", "q", "--output-format", "stream-json"], { cwd: root, server });
    expect(stream.code).toBe(0);
    const types = (stdout: string) => jsonEvents(stdout).map((e) => e.type);
    expect(types(stream.stdout)).toEqual(types(legacy.stdout));
    for (const event of [...jsonEvents(stream.stdout), ...jsonEvents(legacy.stdout)]) expect(event.v).toBe(1);
  });
});

describe("bad values are usage errors naming the flag (exit 2)", () => {
  test.each([
    [["-p", "x", "--output-format", "yaml"], "--output-format must be one of text, json, stream-json, got 'yaml'"],
    [["-p", "x", "--json", "--output-format", "json"], "--json is --output-format stream-json"],
    [["--output-format", "json"], "--output-format needs -p MESSAGE"],
  ])("chat %p", async (args, fragment) => {
    const r = await chat(args, { cwd: root, server });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(fragment);
    expect(r.stdout).toBe("");
    expect(server.requests).toHaveLength(0);
  });
});

function latestRecordsFile(): string {
  const dir = join(root, ".valarmind", "sessions");
  const name = new Bun.Glob("*.jsonl").scanSync(dir).next().value;
  if (typeof name !== "string") throw new Error(`no transcript in ${dir}`);
  return join(dir, name);
}
