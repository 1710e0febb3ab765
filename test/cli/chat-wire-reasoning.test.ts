/**
 * DeepSeek's thinking mode over Chat Completions: "For turns that do perform tool calls, the
 * reasoning_content must be fully passed back to the API in all subsequent requests", else HTTP 400
 * "The reasoning_content in the thinking mode must be passed back to the API." The fake server
 * below refuses such a request with that answer, as DeepSeek does; `valarmind chat -p` is spawned
 * for real. Before, a turn with a tool call failed at its second step.
 */
import { afterAll, afterEach, beforeEach, describe, expect, test } from "bun:test";
import { cleanupTempDirs } from "../support/cli.ts";
import { chatTextStream, chatToolCallStream, chatToolResultsThisTurn, startFakeChatServer, type FakeChatServer } from "../support/fake-chat-server.ts";
import type { FakeResponse } from "../support/fake-responses.ts";
import { makeGitWorkspace } from "../agent/support/agent-harness.ts";
import { chat, latestRecords } from "../agent/support/cli-chat.ts";
import { toChatMessages } from "../../src/model/chat-request.ts";
import { toResponsesInput } from "../../src/model/responses-request.ts";

const REASONING = "The user asks for the port. I should read src/app.ts, where the server starts.";

/** DeepSeek's answer to a request that dropped a tool-call message's reasoning (as reported by its users). */
const MUST_PASS_BACK: FakeResponse = {
  kind: "json",
  status: 400,
  body: JSON.stringify({ error: { message: "The reasoning_content in the thinking mode must be passed back to the API.", type: "invalid_request_error", param: null, code: "invalid_request_error" } }),
  label: "deepseek 400 reasoning_content",
};

interface SentMessage {
  role?: string;
  tool_calls?: unknown[];
  reasoning_content?: unknown;
}

function sentMessages(body: Record<string, unknown>): SentMessage[] {
  return Array.isArray(body.messages) ? (body.messages as SentMessage[]) : [];
}

/** Thinking mode with tools: every assistant message with tool calls must carry its reasoning_content. */
function deepseekResponder(body: Record<string, unknown>): FakeResponse {
  const missing = sentMessages(body).some((m) => m.role === "assistant" && Array.isArray(m.tool_calls) && m.tool_calls.length > 0 && typeof m.reasoning_content !== "string");
  if (missing) return MUST_PASS_BACK;
  return chatToolResultsThisTurn(body).length === 0
    ? chatToolCallStream([{ name: "read_file", arguments: { path: "src/app.ts" } }], { reasoning: REASONING, model: "deepseek-v4-flash" })
    : chatTextStream("Port 4173.", { reasoning: "The file says 4173.", model: "deepseek-v4-flash" });
}

let server: FakeChatServer;
let root: string;
beforeEach(async () => {
  server = startFakeChatServer({ responder: deepseekResponder });
  root = await makeGitWorkspace({ "src/app.ts": "export const port = 4173;\n" });
});
afterEach(async () => {
  await server.close();
});
afterAll(cleanupTempDirs);

const onChatWire = () => ({ OPENAI_BASE_URL: server.baseURL, VALARMIND_WIRE_API: "chat" });

describe("DeepSeek thinking mode: a step's reasoning goes back with its tool calls", () => {
  test("a turn with a tool call completes; the next turn, in a new process, still sends that reasoning", async () => {
    const first = await chat(["-p", "which port?"], { cwd: root, env: onChatWire() });
    expect(first.stderr).toBe("");
    expect(first.code).toBe(0);
    expect(first.stdout).toBe("Port 4173.\n");
    const step2 = sentMessages(server.requests[1]?.body ?? {});
    expect(step2.find((m) => m.role === "assistant" && m.tool_calls)?.reasoning_content).toBe(REASONING);
    // The final answer's reasoning is not needed later: only tool-call steps keep theirs.
    const records = await latestRecords(root);
    expect(records.filter((r) => r.kind === "reasoning")).toEqual([expect.objectContaining({ turn: 1, step: 1, text: REASONING })]);

    // Turn 2 resumes from the transcript: turn 1's tool call is in the window, with its reasoning.
    server.setResponder((body) => {
      const refused = deepseekResponder(body);
      return refused === MUST_PASS_BACK ? refused : chatTextStream("Still 4173.");
    });
    const second = await chat(["--continue", "-p", "and now?"], { cwd: root, env: onChatWire() });
    expect(second.stderr).toBe("");
    expect(second.code).toBe(0);
    expect(second.stdout).toBe("Still 4173.\n");
    const window = sentMessages(server.requests.at(-1)?.body ?? {});
    expect(window.find((m) => m.role === "assistant" && m.tool_calls)?.reasoning_content).toBe(REASONING);
  });

  test("the Responses wire sends no reasoning text back (it has no item for it)", () => {
    const input = toResponsesInput([
      { type: "message", role: "user", content: "which port?" },
      { type: "reasoning_text", text: REASONING },
      { type: "function_call", call_id: "c1", name: "read_file", arguments: "{}" },
      { type: "function_call_output", call_id: "c1", output: "4173" },
    ]);
    expect(input.map((item) => item.type)).toEqual(["message", "function_call", "function_call_output"]);
  });
});

describe("toChatMessages: reasoning_content", () => {
  test("joins the step's text and calls; a tool-call message without reasoning gets an empty one once any has some", () => {
    const messages = toChatMessages("rules", [
      { type: "message", role: "user", content: "go" },
      { type: "message", role: "assistant", content: "Reading." },
      { type: "reasoning_text", text: "think 1" },
      { type: "function_call", call_id: "c1", name: "read_file", arguments: "{}" },
      { type: "function_call_output", call_id: "c1", output: "x" },
      { type: "function_call", call_id: "c2", name: "grep", arguments: "{}" },
      { type: "function_call_output", call_id: "c2", output: "y" },
      { type: "reasoning_text", text: "think 3" },
      { type: "function_call", call_id: "c3", name: "list_files", arguments: "{}" },
      { type: "function_call_output", call_id: "c3", output: "z" },
      { type: "message", role: "assistant", content: "Done." },
    ]);
    const assistants = messages.filter((m) => m.role === "assistant");
    expect(assistants).toEqual([
      { role: "assistant", content: "Reading.", reasoning_content: "think 1", tool_calls: [expect.objectContaining({ id: "c1" })] },
      { role: "assistant", content: null, reasoning_content: "", tool_calls: [expect.objectContaining({ id: "c2" })] },
      { role: "assistant", content: null, reasoning_content: "think 3", tool_calls: [expect.objectContaining({ id: "c3" })] },
      { role: "assistant", content: "Done." },
    ]);
  });

  test("a request without reasoning has no reasoning_content at all (strict servers refuse unknown fields)", () => {
    const messages = toChatMessages("rules", [
      { type: "message", role: "user", content: "go" },
      { type: "function_call", call_id: "c1", name: "read_file", arguments: "{}" },
      { type: "function_call_output", call_id: "c1", output: "x" },
    ]);
    expect(JSON.stringify(messages)).not.toContain("reasoning_content");
  });
});
