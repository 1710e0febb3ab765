/**
 * `scripts/fake-server.ts` (spawned as a real process), its JSONL script format and usage simulation.
 */
import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createOpenAIClient } from "../../src/model/openai-client.ts";
import type { ModelRequest, ModelStreamEvent } from "../../src/model/types.ts";
import { readScriptFile } from "../support/fake-script-file.ts";
import { createUsageSimulator } from "../support/usage-simulation.ts";

const SCRIPT = join(import.meta.dir, "..", "..", "scripts", "fake-server.ts");
const dirs: string[] = [];
const children: Array<ReturnType<typeof Bun.spawn>> = [];
afterEach(async () => {
  for (const child of children.splice(0)) {
    child.kill();
    await child.exited;
  }
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "valarmind-fake-server-"));
  dirs.push(dir);
  return dir;
}

async function firstLine(stream: ReadableStream<Uint8Array>): Promise<string> {
  const decoder = new TextDecoder();
  let text = "";
  for await (const chunk of stream) {
    text += decoder.decode(chunk, { stream: true });
    if (text.includes("\n")) break;
  }
  return text.split("\n")[0] ?? "";
}

function request(content: string): ModelRequest {
  return { model: "gpt-5.5", instructions: "", input: [{ type: "message", role: "user", content }], tools: [], prompt_cache_key: "k", store: false };
}

async function run(baseURL: string, content: string): Promise<ModelStreamEvent[]> {
  const client = createOpenAIClient({ apiKey: "sk-test", baseURL, sleep: async () => {} });
  const out: ModelStreamEvent[] = [];
  for await (const event of client.stream(request(content))) out.push(event);
  return out;
}

test("bun scripts/fake-server.ts --port 0 prints its base URL, plays the script, then echoes", async () => {
  const dir = tempDir();
  const script = join(dir, "script.jsonl");
  const log = join(dir, "requests.jsonl");
  writeFileSync(
    script,
    [
      "# a tool call, then a rate limit, then a recorded answer",
      '{"text": "Reading it.", "tool_calls": [{"name": "read_file", "arguments": {"path": "a.ts"}}]}',
      '{"status": 429, "fixture": "error_429", "headers": {"retry-after-ms": "0"}}',
      '{"fixture": "text_stream.sse"}',
    ].join("\n"),
  );
  const child = Bun.spawn(["bun", SCRIPT, "--port", "0", "--script", script, "--log", log, "--quiet"], { stdout: "pipe", stderr: "pipe" });
  children.push(child);
  const baseURL = await firstLine(child.stdout);
  expect(baseURL).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);

  const first = await run(baseURL, "open a.ts");
  expect(first.at(-1)).toMatchObject({ type: "completed", text: "Reading it.", toolCalls: [{ name: "read_file", arguments: '{"path":"a.ts"}' }] });
  const second = await run(baseURL, "again");
  expect(second.map((e) => e.type)).toContain("retry");
  expect(second.at(-1)).toMatchObject({ type: "completed", text: "The capital of PotatoLand is **Potato City**." });
  const third = await run(baseURL, "hello there");
  expect(third.at(-1)).toMatchObject({ type: "completed", text: "echo: hello there" });

  const logged = readFileSync(log, "utf8").trim().split("\n").map((line) => JSON.parse(line) as { index: number });
  expect(logged.map((l) => l.index)).toEqual([0, 1, 2, 3]);
});

test("a bad option exits 2 with a message", async () => {
  const child = Bun.spawn(["bun", SCRIPT, "--port", "nope"], { stdout: "pipe", stderr: "pipe" });
  expect(await child.exited).toBe(2);
  expect(await new Response(child.stderr).text()).toContain("--port nope: expected an integer");
});

test("script files: comments skipped, unknown keys refused with the line number", () => {
  const dir = tempDir();
  const file = join(dir, "s.jsonl");
  writeFileSync(file, '# c\n\n{"text": "a"}\n{"txt": "b"}\n');
  expect(() => readScriptFile(file)).toThrow(`${file}:4: unknown keys txt`);
  writeFileSync(file, '# c\n\n{"text": "a"}\n');
  expect(readScriptFile(file)).toEqual([{ line: 3, spec: { text: "a" } }]);
});

test("usage simulation: exact input tokens; a shared prefix of 1024+ tokens is cached in steps of 128", async () => {
  const simulate = createUsageSimulator();
  const instructions = "Follow the project rules carefully. ".repeat(300);
  const first = await simulate({ instructions, input: [{ type: "message", role: "user", content: "one" }], prompt_cache_key: "s" });
  expect(first.cached_tokens).toBe(0);
  expect(first.input_tokens).toBeGreaterThan(1500);
  const second = await simulate({ instructions, input: [{ type: "message", role: "user", content: "two" }], prompt_cache_key: "s" });
  expect(second.cached_tokens).toBeGreaterThanOrEqual(1024);
  expect((second.cached_tokens ?? 1) % 128).toBe(0);
  expect(second.cached_tokens).toBeLessThanOrEqual(second.input_tokens ?? 0);
  const otherKey = await simulate({ instructions, input: [], prompt_cache_key: "other" });
  expect(otherKey.cached_tokens).toBe(0);
});
