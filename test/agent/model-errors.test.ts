/**
 * Every model failure through the whole agent (real HTTP to the fake server): a clear error
 * event, turn_end with stopReason "error", and the user's message — plus the error itself —
 * in the transcript, so nothing typed is lost. context_length_exceeded folds the window into
 * the summary and retries once.
 */
import { afterAll, afterEach, beforeEach, describe, expect, test } from "bun:test";
import { createModelClient } from "../../src/model/client-factory.ts";
import { cleanupTempDirs } from "../support/cli.ts";
import {
  cutAfter,
  failedStream,
  fixtureError,
  fixtureStream,
  conversationMessages,
  startFakeResponsesServer,
  textStream,
  type FakeResponsesServer,
} from "../support/fake-responses-server.ts";
import { errorEvents, makeGitWorkspace, openAgent, records, recordsOf, runTurn, type TurnResult } from "./support/agent-harness.ts";
import type { AgentSession } from "../../src/agent/session.ts";

let server: FakeResponsesServer;
beforeEach(() => {
  server = startFakeResponsesServer();
});
afterEach(async () => {
  await server.close();
});
afterAll(cleanupTempDirs);

/** The turn failed with one error of `kind`; the transcript kept the message, the error and turn_end. */
function expectFailedTurn(session: AgentSession, turn: TurnResult, kind: string, userText: string): string {
  expect(turn.stopReason).toBe("error");
  const errors = errorEvents(turn.events);
  expect(errors.map((e) => e.kind)).toEqual([kind] as never);
  const message = errors[0]?.message ?? "";
  const list = records(session);
  expect(list.filter((r) => r.kind === "user").at(-1)).toMatchObject({ text: userText });
  expect(list.find((r) => r.kind === "note" && r.what === `error:${kind}`)).toMatchObject({ text: message });
  expect(list.filter((r) => r.kind === "turn_end").at(-1)).toMatchObject({ stop_reason: "error" });
  return message;
}

/** Two finished turns, so a context overflow has a window to fold. */
async function twoTurns(session: AgentSession): Promise<void> {
  server.enqueue(textStream("first answer"), textStream("second answer"));
  await runTurn(session, "first question about the parser");
  await runTurn(session, "second question about the lexer");
}

function userMessages(index: number): string[] {
  return conversationMessages(server.requests[index]?.body ?? {})
    .filter((i) => i.role === "user")
    .map((i) => i.content ?? "");
}

describe("model errors reach the user and lose nothing", () => {
  test("no API key against api.openai.com: a clear message, and no request is sent", async () => {
    const root = await makeGitWorkspace();
    // Every fetch of this process is watched: nothing may leave for api.openai.com.
    const fetched: string[] = [];
    const realFetch = globalThis.fetch;
    globalThis.fetch = Object.assign(
      (input: string | URL | Request, init?: RequestInit) => {
        fetched.push(input instanceof Request ? input.url : String(input));
        return realFetch(input, init);
      },
      { preconnect: realFetch.preconnect },
    );
    let turn: TurnResult;
    let session: AgentSession;
    try {
      const model = createModelClient({ settings: {}, env: {} });
      ({ session } = await openAgent(root, server, { model }));
      turn = await runTurn(session, "hello without a key");
    } finally {
      globalThis.fetch = realFetch;
    }
    expect(fetched).toEqual([]);
    const message = expectFailedTurn(session, turn, "no_api_key", "hello without a key");
    expect(message).toContain("OPENAI_API_KEY is not set");
    expect(message).toContain("OPENAI_BASE_URL");
    expect(turn.types).not.toContain("retry");
    expect(server.requests).toHaveLength(0);
  });

  test("401: names OPENAI_API_KEY and the server's reason, not retried", async () => {
    const root = await makeGitWorkspace();
    server.enqueue(fixtureError("error_401", { status: 401 }));
    const { session, sleeps } = await openAgent(root, server);
    const turn = await runTurn(session, "hello with a bad key");
    const message = expectFailedTurn(session, turn, "auth", "hello with a bad key");
    expect(message).toContain("OPENAI_API_KEY");
    expect(message).toContain("Incorrect API key provided");
    expect(server.requests).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  test("429: retried after the server's retry-after, then the answer", async () => {
    const root = await makeGitWorkspace();
    server.enqueue(fixtureError("error_429", { headers: { "retry-after": "2" } }), textStream("made it"));
    const { session, sleeps } = await openAgent(root, server);
    const turn = await runTurn(session, "busy server");
    expect(turn.stopReason).toBe("completed");
    expect(turn.text).toBe("made it");
    const retry = turn.events.find((e) => e.type === "retry");
    expect(retry).toMatchObject({ type: "retry", attempt: 1, delayMs: 2000 });
    expect(retry?.type === "retry" && retry.reason).toContain("429");
    expect(sleeps).toEqual([2000]);
    expect(server.requests).toHaveLength(2);
    expect(server.requests[1]?.raw).toBe(server.requests[0]?.raw ?? "");
  });

  test("5xx every time: retried with backoff, then a server error naming the retries", async () => {
    const root = await makeGitWorkspace();
    for (let i = 0; i < 4; i++) server.enqueue(fixtureError("error_500", { status: 500 }));
    const { session, sleeps } = await openAgent(root, server);
    const turn = await runTurn(session, "server is down");
    const message = expectFailedTurn(session, turn, "server", "server is down");
    expect(message).toContain("500");
    expect(message).toContain("after 3 retries");
    expect(sleeps).toHaveLength(3);
    expect(turn.events.filter((e) => e.type === "retry")).toHaveLength(3);
  });

  test("connection refused (a closed port): names the base URL, not retried", async () => {
    const root = await makeGitWorkspace();
    const closed = startFakeResponsesServer();
    const { session, sleeps } = await openAgent(root, closed);
    const baseURL = closed.baseURL;
    await closed.close();
    const turn = await runTurn(session, "anyone there?");
    const message = expectFailedTurn(session, turn, "connection", "anyone there?");
    expect(message).toContain(`Could not reach ${baseURL} (connection refused)`);
    expect(sleeps).toEqual([]);
  });

  test("a stream cut before its terminal event: stream_cut, the partial answer kept", async () => {
    const root = await makeGitWorkspace();
    // 4 frames of preamble, then the first 3 deltas ("The", " answer", " is").
    server.enqueue(cutAfter(textStream("The answer is forty two, as computed."), 7));
    const { session } = await openAgent(root, server);
    const turn = await runTurn(session, "what is the answer?");
    const message = expectFailedTurn(session, turn, "stream_cut", "what is the answer?");
    expect(message.length).toBeGreaterThan(10);
    expect(recordsOf(session, "assistant").map((r) => r.text)).toEqual(["The answer is"]);
  });
});

describe("context_length_exceeded: fold the window and retry once", () => {
  test("HTTP 400: the oldest block is folded into the summary and the request is sent again, smaller", async () => {
    const root = await makeGitWorkspace();
    const { session } = await openAgent(root, server);
    await twoTurns(session);
    server.enqueue(fixtureError("context_length_400"), textStream("answered after compacting"));
    const turn = await runTurn(session, "third question");

    expect(turn.stopReason).toBe("completed");
    expect(turn.text).toBe("answered after compacting");
    expect(errorEvents(turn.events)).toEqual([]);
    expect(turn.events.find((e) => e.type === "retry")).toMatchObject({ attempt: 1, delayMs: 0 });
    expect(server.requests).toHaveLength(4);
    expect(userMessages(2)).toEqual(["first question about the parser", "second question about the lexer", "third question"]);
    expect(userMessages(3)).toEqual(["third question"]);
    expect(JSON.stringify(server.requests[3]?.body.input)).toContain("conversation_summary");
    const summary = recordsOf(session, "summary");
    expect(summary).toHaveLength(1);
    expect(summary[0]).toMatchObject({ from_turn: 1, through_turn: 2, reason: "budget" });
  });

  test("inside a 200 stream (response.failed): the same fold and one retry", async () => {
    const root = await makeGitWorkspace();
    const { session } = await openAgent(root, server);
    await twoTurns(session);
    server.enqueue(fixtureStream("failed_event_context_length.sse"), textStream("fits now"));
    const turn = await runTurn(session, "third question");
    expect(turn.stopReason).toBe("completed");
    expect(turn.text).toBe("fits now");
    expect(userMessages(3)).toEqual(["third question"]);
    expect(recordsOf(session, "summary")).toHaveLength(1);
  });

  test("a second overflow after the fold is an error; the message is kept", async () => {
    const root = await makeGitWorkspace();
    const { session } = await openAgent(root, server);
    await twoTurns(session);
    server.enqueue(fixtureError("context_length_400"), failedStream("context_length_exceeded", "Your input exceeds the context window of this model."));
    const turn = await runTurn(session, "still too long");
    const message = expectFailedTurn(session, turn, "context_length_exceeded", "still too long");
    expect(message).toContain("context window");
    expect(server.requests).toHaveLength(4);
    expect(turn.events.filter((e) => e.type === "retry")).toHaveLength(1);
  });

  test("with nothing to fold (an empty window) the overflow is reported at once", async () => {
    const root = await makeGitWorkspace();
    server.enqueue(fixtureError("context_length_400"));
    const { session } = await openAgent(root, server);
    const turn = await runTurn(session, "a huge first message");
    expectFailedTurn(session, turn, "context_length_exceeded", "a huge first message");
    expect(server.requests).toHaveLength(1);
    expect(turn.types).not.toContain("retry");
  });
});
