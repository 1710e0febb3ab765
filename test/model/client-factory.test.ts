import { afterEach, beforeEach, expect, test } from "bun:test";
import {
  createModelClient,
  DEFAULT_BASE_URL,
  endpointWarning,
  PLACEHOLDER_API_KEY,
  reasoningFor,
  resolveEndpoint,
} from "../../src/model/client-factory.ts";
import type { ModelRequest, ModelStreamEvent } from "../../src/model/types.ts";
import { startFakeResponsesServer, textStream, type FakeResponsesServer } from "../support/fake-responses-server.ts";

const request: ModelRequest = { model: "gpt-5.5", instructions: "", input: [], tools: [], prompt_cache_key: "k", store: false };

let server: FakeResponsesServer;
beforeEach(() => {
  server = startFakeResponsesServer();
});
afterEach(async () => {
  await server.close();
});

async function collect(events: AsyncIterable<ModelStreamEvent>): Promise<ModelStreamEvent[]> {
  const out: ModelStreamEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

test("endpoint: settings.baseURL, then OPENAI_BASE_URL, then api.openai.com; trailing slashes dropped", () => {
  expect(resolveEndpoint({ baseURL: "http://a/v1/" }, { OPENAI_BASE_URL: "http://b/v1", OPENAI_API_KEY: "k" })).toEqual({
    baseURL: "http://a/v1",
    apiKey: "k",
    keySource: "env",
  });
  expect(resolveEndpoint({}, { OPENAI_BASE_URL: "http://b/v1", OPENAI_API_KEY: "k" }).baseURL).toBe("http://b/v1");
  expect(resolveEndpoint({}, { OPENAI_API_KEY: "k" }).baseURL).toBe(DEFAULT_BASE_URL);
});

test("no key: missing against api.openai.com (with a warning), placeholder against another server", () => {
  const missing = resolveEndpoint({}, {});
  expect(missing).toEqual({ baseURL: DEFAULT_BASE_URL, apiKey: undefined, keySource: "missing" });
  expect(endpointWarning(missing)).toBe("OPENAI_API_KEY is not set; export it or set OPENAI_BASE_URL to a local Responses server");
  const local = resolveEndpoint({ baseURL: "http://127.0.0.1:8080/v1" }, { OPENAI_API_KEY: "  " });
  expect(local).toEqual({ baseURL: "http://127.0.0.1:8080/v1", apiKey: PLACEHOLDER_API_KEY, keySource: "placeholder" });
  expect(endpointWarning(local)).toBeUndefined();
});

test("the factory's client without a key yields no_api_key and sends nothing", async () => {
  const client = createModelClient({ settings: {}, env: {} });
  const events = await collect(client.stream(request));
  expect(events).toEqual([expect.objectContaining({ type: "error", kind: "no_api_key" })]);
});

test("the factory's client talks to a local server with the placeholder key", async () => {
  server.enqueue(textStream("hello"));
  const client = createModelClient({ settings: { baseURL: server.baseURL }, env: {} });
  const events = await collect(client.stream(request));
  expect(events.at(-1)).toMatchObject({ type: "completed", text: "hello" });
  expect(server.requests[0]?.headers.authorization).toBe(`Bearer ${PLACEHOLDER_API_KEY}`);
});

test("importing the factory and creating a client does not load the openai package", async () => {
  const code = [
    'import { createModelClient } from "./src/model/client-factory.ts";',
    "createModelClient({ settings: {}, env: { OPENAI_API_KEY: 'x' } });",
    'console.log(Object.keys(require.cache).filter((k) => k.includes("node_modules/openai")).length);',
  ].join("\n");
  const child = Bun.spawn(["bun", "-e", code], { cwd: `${import.meta.dir}/../..`, stdout: "pipe", stderr: "pipe" });
  expect(await child.exited).toBe(0);
  expect((await new Response(child.stdout).text()).trim()).toBe("0");
});

test("reasoning: effort from settings with summaries for reasoning models; omitted for 'none' and other models", () => {
  expect(reasoningFor({ model: "gpt-5.5", reasoningEffort: "high" })).toEqual({ effort: "high", summary: "auto" });
  expect(reasoningFor({ model: "o3-mini", reasoningEffort: "low" })).toEqual({ effort: "low", summary: "auto" });
  expect(reasoningFor({ model: "openai/gpt-oss-20b", reasoningEffort: "medium" })).toEqual({ effort: "medium", summary: "auto" });
  expect(reasoningFor({ model: "gpt-5.5", reasoningEffort: "none" })).toBeUndefined();
  expect(reasoningFor({ model: "gpt-4o", reasoningEffort: "medium" })).toBeUndefined();
});
