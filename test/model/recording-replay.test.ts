import { afterEach, beforeEach, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ValarmindError } from "../../src/errors.ts";
import { createOpenAIClient } from "../../src/model/openai-client.ts";
import { createRecordingClient } from "../../src/model/recording-client.ts";
import { createReplayClient, readRecording } from "../../src/model/replay-client.ts";
import type { ModelClient, ModelRequest, ModelStreamEvent } from "../../src/model/types.ts";
import { fixtureStream, startFakeResponsesServer, type FakeResponsesServer } from "../support/fake-responses-server.ts";

const request: ModelRequest = {
  model: "gpt-5.5",
  instructions: "Be brief.",
  input: [{ type: "message", role: "user", content: "capital?" }],
  tools: [],
  prompt_cache_key: "k",
  store: false,
};

let dir: string;
let server: FakeResponsesServer;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "valarmind-recording-"));
  server = startFakeResponsesServer();
});
afterEach(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

async function collect(client: ModelClient): Promise<ModelStreamEvent[]> {
  const out: ModelStreamEvent[] = [];
  for await (const event of client.stream(request)) out.push(event);
  return out;
}

test("a recorded conversation replays the same events without a server, and no key reaches the file", async () => {
  const file = join(dir, "nested", "calls.jsonl");
  server.enqueue(fixtureStream("message_function_call_stream.sse"), fixtureStream("text_stream.sse"));
  const recording = createRecordingClient(createOpenAIClient({ apiKey: "sk-secret-123", baseURL: server.baseURL }), file);
  const live = [await collect(recording), await collect(recording)];
  expect(await recording.countInputTokens(request)).toBe(16);
  await server.close();

  const text = readFileSync(file, "utf8");
  expect(text).not.toContain("sk-secret-123");
  expect(text.trim().split("\n")).toHaveLength(3);

  const replay = createReplayClient(file);
  expect([await collect(replay), await collect(replay)]).toEqual(live);
  expect(await replay.countInputTokens(request)).toBe(16);
  expect(replay.requests).toEqual([request, request, request]);
  const exhausted = await collect(replay);
  expect(exhausted).toEqual([expect.objectContaining({ type: "error", kind: "failed" })]);
  expect(exhausted[0]?.type === "error" && exhausted[0].message).toContain("has no stream call #3");
});

test("a consumer that stops early is recorded as incomplete", async () => {
  const file = join(dir, "calls.jsonl");
  server.enqueue(fixtureStream("text_stream.sse"));
  const recording = createRecordingClient(createOpenAIClient({ apiKey: "sk-test", baseURL: server.baseURL }), file);
  for await (const event of recording.stream(request)) if (event.type === "text_delta") break;
  const [call] = readRecording(file);
  expect(call).toMatchObject({ method: "stream", complete: false, events: [{ type: "text_delta", delta: "The" }] });
});

test("a damaged recording names the file and line", () => {
  const file = join(dir, "bad.jsonl");
  writeFileSync(file, `${JSON.stringify({ v: 1, method: "stream", request, events: [], complete: true })}\n{"v":2}\n`);
  expect(() => readRecording(file)).toThrow(new ValarmindError(`${file}:2: unsupported version 2 (expected 1)`));
  writeFileSync(file, "{not json\n");
  expect(() => readRecording(file)).toThrow(`${file}:1: not valid JSON`);
  expect(() => readRecording(join(dir, "missing.jsonl"))).toThrow("cannot read model recording");
});
