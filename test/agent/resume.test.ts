/**
 * Resuming sessions: the window is rebuilt from the transcript, and a crash (a torn last line, a
 * turn without turn_end) is recovered without losing the user's words.
 */
import { afterAll, afterEach, beforeEach, describe, expect, test } from "bun:test";
import { appendFileSync } from "node:fs";
import type { AgentSession } from "../../src/agent/session.ts";
import { readSession } from "../../src/session/transcript.ts";
import { cleanupTempDirs } from "../support/cli.ts";
import { conversationMessages, startFakeResponsesServer, textStream, type FakeResponsesServer } from "../support/fake-responses-server.ts";
import { makeGitWorkspace, openAgent, records, recordsOf, runTurn } from "./support/agent-harness.ts";

let server: FakeResponsesServer;
beforeEach(() => {
  server = startFakeResponsesServer();
});
afterEach(async () => {
  await server.close();
});
afterAll(cleanupTempDirs);

/** "role: content" of the request's conversation messages (valarmind's data messages left out). */
function conversation(index: number): string[] {
  return conversationMessages(server.requests[index]?.body ?? {}).map((i) => `${i.role}: ${i.content}`);
}

const TORN = '{"v":1,"kind":"assistant","ts":"2026-01-31T12:00:00.000Z","turn":2,"step":1,"text":"half an answ';

/** One finished turn, then a crash during turn 2: its user line written, its answer torn mid-line. */
async function crashedSession(root: string): Promise<string> {
  server.enqueue(textStream("first answer"));
  const { session } = await openAgent(root, server);
  await runTurn(session, "first question");
  const file = session.transcriptPath ?? "";
  await session.close();
  appendFileSync(file, `${JSON.stringify({ v: 1, kind: "user", ts: new Date().toISOString(), turn: 2, text: "second question, interrupted" })}\n`);
  appendFileSync(file, TORN);
  return file;
}

describe("resume", () => {
  test("a later session continues the latest one: same id, the window rebuilt into the next request", async () => {
    const root = await makeGitWorkspace();
    server.enqueue(textStream("answer one"), textStream("answer two"), textStream("answer three"));
    const first = await openAgent(root, server);
    await runTurn(first.session, "question one");
    await runTurn(first.session, "question two");
    await first.session.close();

    const again = await openAgent(root, server, { resume: { kind: "latest" } });
    expect(again.session.resumed).toBe(true);
    expect(again.session.sessionId).toBe(first.session.sessionId);
    expect(again.session.openNotices).toEqual([]);
    const turn = await runTurn(again.session, "question three");
    expect(turn.events.find((e) => e.type === "turn_start")).toMatchObject({ turn: 3 });
    expect(conversation(2)).toEqual(["user: question one", "assistant: answer one", "user: question two", "assistant: answer two", "user: question three"]);
    expect(server.requests[2]?.body.prompt_cache_key).toBe(server.requests[0]?.body.prompt_cache_key ?? "");
  });

  test("resume by id (or a unique prefix) picks that session, not the latest", async () => {
    const root = await makeGitWorkspace();
    server.enqueue(textStream("a1"), textStream("b1"), textStream("a2"));
    const a = await openAgent(root, server);
    await runTurn(a.session, "session a");
    await a.session.close();
    const b = await openAgent(root, server);
    await runTurn(b.session, "session b");
    await b.session.close();

    const resumed = await openAgent(root, server, { resume: { kind: "id", id: a.session.sessionId.slice(0, 6) } });
    await runTurn(resumed.session, "back in a");
    expect(conversation(2)).toEqual(["user: session a", "assistant: a1", "user: back in a"]);
  });

  test("continuing with no session is a usage error that says how to start one", async () => {
    const root = await makeGitWorkspace();
    await expect(openAgent(root, server, { resume: { kind: "latest" } })).rejects.toMatchObject({
      exitCode: 2,
      message: expect.stringContaining("no session to continue"),
    });
  });

  describe("after a crash", () => {
    let root: string;
    let file: string;
    let session: AgentSession;
    beforeEach(async () => {
      root = await makeGitWorkspace();
      file = await crashedSession(root);
      session = (await openAgent(root, server, { resume: { kind: "latest" } })).session;
    });

    test("the user is told about the torn line and the unfinished turn", () => {
      expect(session.openNotices).toEqual([
        expect.stringContaining("the last line was incomplete"),
        expect.stringContaining('turn 2 ("second question, interrupted") never finished'),
      ]);
    });

    test("the torn text is kept verbatim in a note; the file is valid again", () => {
      const read = readSession(file);
      expect(read.tornTail).toBeUndefined();
      const note = read.records.find((r) => r.kind === "note" && r.what === "torn_line_recovered");
      expect(note).toMatchObject({ text: TORN });
    });

    test("the unfinished turn is closed as failed, and the next request rebuilds the whole conversation", async () => {
      expect(recordsOf(session, "turn_end").map((r) => [r.turn, r.stop_reason])).toEqual([
        [1, "completed"],
        [2, "error"],
      ]);
      server.enqueue(textStream("third answer"));
      const turn = await runTurn(session, "third question");
      expect(turn.stopReason).toBe("completed");
      expect(turn.events.find((e) => e.type === "turn_start")).toMatchObject({ turn: 3 });
      expect(conversation(1)).toEqual([
        "user: first question",
        "assistant: first answer",
        "user: second question, interrupted",
        "user: third question",
      ]);
    });

    test("a second resume rebuilds the same window (the conversation only grows)", async () => {
      server.enqueue(textStream("third answer"), textStream("fourth answer"));
      await runTurn(session, "third question");
      await session.close();
      const again = await openAgent(root, server, { resume: { kind: "latest" } });
      expect(again.session.openNotices).toEqual([]);
      await runTurn(again.session, "fourth question");
      const before = conversation(1);
      const after = conversation(2);
      expect(after.slice(0, before.length)).toEqual(before);
      expect(after.slice(before.length)).toEqual(["assistant: third answer", "user: fourth question"]);
      expect(records(again.session).filter((r) => r.kind === "user").map((r) => r.kind === "user" && r.turn)).toEqual([1, 2, 3, 4]);
    });
  });
});
