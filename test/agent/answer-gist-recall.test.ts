/**
 * Long answers enter the window as their gist and come back whole through recall_turn (ADR 0087),
 * end to end against the fake Responses server over real HTTP: the next request carries the gist
 * (and keeps carrying the same bytes, after a resume too), the manifest says what was left out,
 * the transcript keeps the answer whole, and the model's recall_turn call returns it.
 */
import { afterAll, afterEach, beforeEach, describe, expect, test } from "bun:test";
import { cleanupTempDirs } from "../support/cli.ts";
import { inputItems, startFakeResponsesServer, textStream, toolCallStream, type FakeResponsesServer } from "../support/fake-responses-server.ts";
import { makeGitWorkspace, manifests, openAgent, recordsOf, runTurn } from "./support/agent-harness.ts";

let server: FakeResponsesServer;
beforeEach(() => {
  server = startFakeResponsesServer();
});
afterEach(async () => {
  await server.close();
});
afterAll(cleanupTempDirs);

const LONG_ANSWER = Array.from({ length: 30 }, (_, i) => `Point ${i + 1}: the retry queue for region ${i + 1} drains in ${(i + 1) * 3} seconds.`).join(" ");

const assistantTexts = (index: number) => inputItems(server.requests[index]?.body ?? {}).filter((i) => i.type === "message" && i.role === "assistant").map((i) => i.content ?? "");

describe("long answers in the window", () => {
  test("the next request carries the gist; recall_turn returns the whole answer from the transcript", async () => {
    const root = await makeGitWorkspace();
    server.enqueue(textStream(LONG_ANSWER), toolCallStream([{ name: "recall_turn", arguments: { turn: 1 } }]), textStream("Point 17 is 51 seconds."), textStream("Short."));
    const { session } = await openAgent(root, server);
    await runTurn(session, "How fast do the retry queues drain?");
    const turn = await runTurn(session, "What exactly did you say about region 17?");
    expect(turn.stopReason).toBe("completed");

    // Request 1 (turn 2's first step): turn 1's answer is a gist, not the answer.
    const [gist] = assistantTexts(1);
    expect(gist).toContain("Point 1: the retry queue for region 1 drains in 3 seconds.");
    expect(gist).toContain("Point 30: the retry queue for region 30 drains in 90 seconds.");
    expect(gist).not.toContain("region 17 drains");
    expect(gist).toMatch(/\[… \d+ more tokens: recall_turn 1\]/);
    expect(gist?.length).toBeLessThan(LONG_ANSWER.length / 3);

    // Request 2 (after the call): the tool's output is the whole answer, word for word.
    const outputs = inputItems(server.requests[2]?.body ?? {}).filter((i) => i.type === "function_call_output");
    expect(outputs).toHaveLength(1);
    expect(outputs[0]?.output).toContain("user:\nHow fast do the retry queues drain?");
    expect(outputs[0]?.output).toContain(`assistant:\n${LONG_ANSWER}`);
    // The prefix held: request 2 repeats request 1 and the gist in it.
    expect(assistantTexts(2)[0]).toBe(gist);

    // The transcript keeps the answer whole; the manifest says what the window left out.
    expect(recordsOf(session, "assistant").map((r) => r.text)).toContain(LONG_ANSWER);
    const lastOfTurn2 = (await manifests(session)).filter((m) => m.turn === 2).at(-1);
    const item = lastOfTurn2?.items.find((i) => i.id === "turn:1");
    expect(item?.detail).toMatch(/its answer as a gist, \d+ tokens left out \(recall_turn\)/);

    // Turn 3, after a resume in a new session object: the same gist bytes (the cached prefix holds).
    await session.close();
    const again = await openAgent(root, server, { resume: { kind: "latest" } });
    await runTurn(again.session, "Thanks.");
    expect(assistantTexts(3)[0]).toBe(gist);
    await again.session.close();
  });

  test("recall_turn names the turns it holds when asked for one it does not", async () => {
    const root = await makeGitWorkspace();
    server.enqueue(textStream("First."), toolCallStream([{ name: "recall_turn", arguments: { turn: 9 } }]), textStream("No such turn."));
    const { session } = await openAgent(root, server);
    await runTurn(session, "Hello.");
    const turn = await runTurn(session, "Recall turn 9.");
    expect(turn.events.some((e) => e.type === "tool_call_end" && e.isError)).toBe(true);
    const output = inputItems(server.requests[2]?.body ?? {}).find((i) => i.type === "function_call_output")?.output;
    expect(output).toContain("no turn 9 in this session's transcript (turns held: 1–2)");
    await session.close();
  });

  test("windowAnswerTokens 0 keeps answers whole", async () => {
    const root = await makeGitWorkspace();
    server.enqueue(textStream(LONG_ANSWER), textStream("Short."));
    const { session } = await openAgent(root, server, { settings: { windowAnswerTokens: 0 } });
    await runTurn(session, "How fast do the retry queues drain?");
    await runTurn(session, "Thanks.");
    expect(assistantTexts(1)).toEqual([LONG_ANSWER]);
    await session.close();
  });
});
