/**
 * The window slides in blocks: with SHORT_BUFFER_TURNS = 20 and blocks of 4, the 20th turn folds
 * the window's older half (turns 1–8, two blocks) into the rolling summary; later requests carry
 * the summary instead of those turns.
 * Once with the offline summarizer (fast), once with the model summarizer answered by the fake
 * server (recognised by its instructions), once with that request failing.
 */
import { afterAll, afterEach, beforeEach, describe, expect, test } from "bun:test";
import type { AgentSession } from "../../src/agent/session.ts";
import { ExtractiveSummarizer } from "../../src/memory/summary.ts";
import { cleanupTempDirs } from "../support/cli.ts";
import {
  httpError,
  conversationMessages,
  lastUserText,
  startFakeResponsesServer,
  textStream,
  type FakeResponse,
  type FakeResponsesServer,
  type RecordedRequest,
} from "../support/fake-responses-server.ts";
import { makeGitWorkspace, openAgent, recordsOf, runTurn, type TurnResult } from "./support/agent-harness.ts";

const SLIDE = { shortBufferTurns: 20, windowBlockTurns: 4 };
const MODEL_SUMMARY = "SUMMARY-BY-MODEL: the user asked about messages 1 to 4.";

let server: FakeResponsesServer;
beforeEach(() => {
  server = startFakeResponsesServer();
});
afterEach(async () => {
  await server.close();
});
afterAll(cleanupTempDirs);

function isSummaryRequest(body: Record<string, unknown>): boolean {
  return String(body.instructions ?? "").includes("You maintain the rolling summary");
}

function answerTurns(summary: (body: Record<string, unknown>) => FakeResponse): void {
  server.setResponder((body) => (isSummaryRequest(body) ? summary(body) : textStream(`answer to ${lastUserText(body)}`)));
}

async function runTurns(session: AgentSession, from: number, to: number): Promise<TurnResult[]> {
  const results: TurnResult[] = [];
  for (let n = from; n <= to; n++) results.push(await runTurn(session, `message ${n}`));
  return results;
}

function mainRequests(): RecordedRequest[] {
  return server.requests.filter((r) => !isSummaryRequest(r.body));
}

function userMessages(request: RecordedRequest | undefined): string[] {
  return conversationMessages(request?.body ?? {})
    .filter((i) => i.role === "user")
    .map((i) => i.content ?? "");
}

function inputText(request: RecordedRequest | undefined): string {
  return JSON.stringify(request?.body.input ?? []);
}

describe("window sliding", () => {
  test("offline summarizer: turn 20 folds turns 1–8 (the older half, two blocks); the next request carries the summary, not those turns", async () => {
    const root = await makeGitWorkspace();
    answerTurns(() => textStream("unused"));
    const { session } = await openAgent(root, server, { settings: SLIDE, summarizer: new ExtractiveSummarizer() });
    const turns = await runTurns(session, 1, 20);

    expect(turns.slice(0, 19).flatMap((t) => t.types)).not.toContain("window_slid");
    const slid = turns[19]?.events.find((e) => e.type === "window_slid");
    expect(slid).toMatchObject({ type: "window_slid", foldedTurns: 8 });
    // The answer is delivered before the fold runs (a fold may be a model call of its own).
    const types = turns[19]?.types ?? [];
    expect(types.indexOf("turn_end")).toBeLessThan(types.indexOf("window_slid"));
    expect(recordsOf(session, "summary")).toEqual([
      expect.objectContaining({ from_turn: 1, through_turn: 8, reason: "window_full", summarizer: "extractive" }),
    ]);
    expect(mainRequests()[19] && userMessages(mainRequests()[19])).toContain("message 1");

    await runTurn(session, "message 21");
    const next = mainRequests()[20];
    const users = userMessages(next);
    expect(users.slice(0, 2)).toEqual(["message 9", "message 10"]);
    expect(users.at(-1)).toBe("message 21");
    expect(users).toHaveLength(13);
    expect(inputText(next)).toContain("conversation_summary");
    expect(inputText(next)).toContain('turns=\\"1–8\\"');
  });

  test("the summary survives a resume: the rebuilt window starts after the folded turns", async () => {
    const root = await makeGitWorkspace();
    answerTurns(() => textStream("unused"));
    const first = await openAgent(root, server, { settings: SLIDE, summarizer: new ExtractiveSummarizer() });
    await runTurns(first.session, 1, 20);
    await first.session.close();
    const again = await openAgent(root, server, { settings: SLIDE, resume: { kind: "latest" }, summarizer: new ExtractiveSummarizer() });
    await runTurn(again.session, "message 21");
    const users = userMessages(mainRequests()[20]);
    expect(users[0]).toBe("message 9");
    expect(inputText(mainRequests()[20])).toContain("conversation_summary");
  });

  test("model summarizer: its own request with only the evicted turns; its answer becomes the summary", async () => {
    const root = await makeGitWorkspace();
    answerTurns(() => textStream(MODEL_SUMMARY));
    const { session } = await openAgent(root, server, { settings: SLIDE });
    await runTurns(session, 1, 20);

    const summaryRequests = server.requests.filter((r) => isSummaryRequest(r.body));
    expect(summaryRequests).toHaveLength(1);
    const request = summaryRequests[0];
    expect(request?.body.prompt_cache_key).toBe(`valarmind-${session.sessionId}-summary`);
    expect(request?.body.tools ?? []).toEqual([]);
    const text = inputText(request);
    for (const n of [1, 2, 3, 4, 5, 6, 7, 8]) expect(text).toContain(`message ${n}`);
    expect(text).not.toContain("message 9");
    expect(recordsOf(session, "summary")).toEqual([expect.objectContaining({ from_turn: 1, through_turn: 8, summarizer: "model", text: MODEL_SUMMARY })]);

    await runTurn(session, "message 21");
    const next = mainRequests()[20];
    expect(inputText(next)).toContain(MODEL_SUMMARY);
    expect(userMessages(next)[0]).toBe("message 9");
  });

  test("a failing summary request falls back to the offline summarizer and says so", async () => {
    const root = await makeGitWorkspace();
    answerTurns(() => httpError(400, { message: "summary model unavailable", code: "model_not_found" }));
    const { session } = await openAgent(root, server, { settings: SLIDE });
    const turns = await runTurns(session, 1, 20);
    const last = turns[19];
    expect(last?.stopReason).toBe("completed");
    expect(last?.events.find((e) => e.type === "notice")).toMatchObject({ message: expect.stringContaining("offline summarizer") });
    // The record names the summarizer that actually wrote the summary.
    expect(recordsOf(session, "summary")).toEqual([expect.objectContaining({ from_turn: 1, through_turn: 8, summarizer: "extractive" })]);
    await runTurn(session, "message 21");
    expect(userMessages(mainRequests()[20])[0]).toBe("message 9");
  });
});
