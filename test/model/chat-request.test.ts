/** ModelRequest (Responses shape, as the prompt builder makes it) → a Chat Completions body. */
import { describe, expect, test } from "bun:test";
import { toChatMessages, toChatRequest } from "../../src/model/chat-request.ts";
import type { ModelRequest } from "../../src/model/types.ts";

const readFile = {
  type: "function" as const,
  name: "read_file",
  description: "Read a file",
  parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"], additionalProperties: false },
  strict: true,
};

const request: ModelRequest = {
  model: "qwen3-coder",
  instructions: "You are valarmind.\n",
  input: [
    { type: "message", role: "user", content: "<summary>\nEarlier: set up the repo.\n</summary>\n" },
    { type: "message", role: "user", content: "Which port does the app use?" },
    { type: "message", role: "assistant", content: "Let me read both files." },
    { type: "function_call", call_id: "call_a", name: "read_file", arguments: '{"path":"src/app.ts"}' },
    { type: "function_call", call_id: "call_b", name: "read_file", arguments: '{"path":"README.md"}' },
    { type: "function_call_output", call_id: "call_a", output: "export const port = 4173;" },
    { type: "function_call_output", call_id: "call_b", output: "# demo" },
    { type: "message", role: "assistant", content: "Port 4173." },
    { type: "message", role: "user", content: "<context>\ntime: now\n</context>\n" },
    { type: "message", role: "user", content: "Thanks" },
  ],
  tools: [readFile, { ...readFile, name: "list_dir", strict: false }],
  prompt_cache_key: "session-1",
  store: false,
  reasoning: { effort: "low", summary: "auto" },
};

describe("toChatRequest", () => {
  test("instructions become the system message; tool calls ride on the assistant message they follow", () => {
    expect(toChatRequest(request).messages).toEqual([
      { role: "system", content: "You are valarmind.\n" },
      // Two user messages in a row are one: strict chat templates refuse a second user turn.
      { role: "user", content: "<summary>\nEarlier: set up the repo.\n</summary>\n\nWhich port does the app use?" },
      {
        role: "assistant",
        content: "Let me read both files.",
        tool_calls: [
          { id: "call_a", type: "function", function: { name: "read_file", arguments: '{"path":"src/app.ts"}' } },
          { id: "call_b", type: "function", function: { name: "read_file", arguments: '{"path":"README.md"}' } },
        ],
      },
      { role: "tool", tool_call_id: "call_a", content: "export const port = 4173;" },
      { role: "tool", tool_call_id: "call_b", content: "# demo" },
      { role: "assistant", content: "Port 4173." },
      { role: "user", content: "<context>\ntime: now\n</context>\n\nThanks" },
    ]);
  });

  test("no two user or two assistant messages in a row, and every tool message answers a call offered before it", () => {
    const messages = toChatRequest(request).messages;
    const neighbours = messages.slice(1).map((m, i) => `${messages[i]?.role}>${m.role}`);
    expect(neighbours.filter((pair) => pair === "user>user" || pair === "assistant>assistant")).toEqual([]);
    const offered = new Set(messages.flatMap((m) => (m.role === "assistant" ? (m.tool_calls ?? []).map((c) => c.id) : [])));
    for (const m of messages) if (m.role === "tool") expect(offered.has(m.tool_call_id)).toBe(true);
  });

  test("streamed with usage; tools in chat shape (strict only when set); reasoning effort; no cache key or store", () => {
    const body = toChatRequest({ ...request, max_output_tokens: 2048 });
    expect(body).toMatchObject({ model: "qwen3-coder", stream: true, stream_options: { include_usage: true }, reasoning_effort: "low", max_completion_tokens: 2048 });
    expect(body.tools).toEqual([
      { type: "function", function: { name: "read_file", description: "Read a file", parameters: readFile.parameters, strict: true } },
      { type: "function", function: { name: "list_dir", description: "Read a file", parameters: readFile.parameters } },
    ]);
    expect(Object.keys(body)).not.toContain("prompt_cache_key");
    expect(Object.keys(body)).not.toContain("store");
    expect(Object.keys(body)).not.toContain("input");
  });

  test("no tools: the field is left out (OpenAI refuses an empty array); no reasoning: no reasoning_effort", () => {
    const { reasoning: _reasoning, ...plain } = request;
    const body = toChatRequest({ ...plain, tools: [] });
    expect("tools" in body).toBe(false);
    expect("reasoning_effort" in body).toBe(false);
    expect("max_completion_tokens" in body).toBe(false);
  });

  test("calls with no text before them get content null; empty instructions send no system message", () => {
    expect(
      toChatMessages("", [
        { type: "message", role: "user", content: "go" },
        { type: "function_call", call_id: "c1", name: "list_dir", arguments: "{}" },
        { type: "function_call_output", call_id: "c1", output: "a.ts" },
        { type: "message", role: "assistant", content: "One file." },
        { type: "message", role: "assistant", content: "Done." },
      ]),
    ).toEqual([
      { role: "user", content: "go" },
      { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "list_dir", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "c1", content: "a.ts" },
      { role: "assistant", content: "One file.\n\nDone." },
    ]);
  });
});
