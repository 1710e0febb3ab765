/**
 * A turn's per-turn part (state changes, volatile context) is taken at its first request, sent
 * as-is by its later steps, and kept with the turn in the window (ADR 0074): so the next turn's
 * request repeats the whole last request of this one — its steps included — and the part is a
 * delta, each change sent once. Real AgentSession against the fake Responses server over HTTP.
 */
import { afterAll, afterEach, beforeEach, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { cleanupTempDirs } from "../support/cli.ts";
import { inputItems, startFakeResponsesServer, textStream, toolCallStream, type FakeResponsesServer } from "../support/fake-responses-server.ts";
import { makeGitWorkspace, openAgent, recordsOf, runTurn } from "./support/agent-harness.ts";
import { ShortTermMemory } from "../../src/memory/short-term.ts";
import { snapshotSource } from "../../src/memory/state-snapshot.ts";
import type { TranscriptRecord } from "../../src/session/transcript-schema.ts";
import { emptyState } from "../../src/state/empty-state.ts";

let server: FakeResponsesServer;
beforeEach(() => {
  server = startFakeResponsesServer();
});
afterEach(async () => {
  await server.close();
});
afterAll(cleanupTempDirs);

type Body = Record<string, unknown>;

/** The request's input as JSON strings, one per item, to compare prefixes byte for byte. */
function items(index: number): string[] {
  return inputItems(server.requests[index]?.body ?? {}).map((item) => JSON.stringify(item));
}

function text(index: number): string {
  return JSON.stringify(server.requests[index]?.body ?? {});
}

function occurrences(haystack: string, needle: string): number {
  return haystack.split(needle).length - 1;
}

/** True when request `earlier`'s tools, instructions and input are a prefix of request `later`'s. */
function isPrefix(earlier: number, later: number): boolean {
  const a = server.requests[earlier]?.body as Body;
  const b = server.requests[later]?.body as Body;
  if (JSON.stringify(a.tools) !== JSON.stringify(b.tools) || a.instructions !== b.instructions) return false;
  const first = items(earlier);
  const second = items(later);
  return first.length <= second.length && first.every((item, i) => item === second[i]);
}

describe("the per-turn part is kept with its turn", () => {
  test("the next turn's first request repeats the last request of this turn whole, steps included", async () => {
    const root = await makeGitWorkspace({ "src/a.ts": "export const a = 1;\n" });
    server.enqueue(
      toolCallStream([{ name: "read_file", arguments: { path: "src/a.ts" } }]),
      toolCallStream([{ name: "grep", arguments: { pattern: "a", path: "src" } }]),
      textStream("a is 1."),
      textStream("Nothing else."),
    );
    const { session } = await openAgent(root, server);
    await runTurn(session, "what is a?");
    await runTurn(session, "anything else?");
    expect(server.requests).toHaveLength(4);
    // Steps of one turn share everything before their own steps.
    expect(isPrefix(0, 1)).toBe(true);
    expect(isPrefix(1, 2)).toBe(true);
    // The turn's last request (message, per-turn part, both calls and outputs) is the next turn's prefix.
    expect(isPrefix(2, 3)).toBe(true);
    // The volatile context sits after the message in the window, as the turn's requests sent it.
    const window = items(3);
    const message = window.findIndex((item) => item.includes("what is a?"));
    expect(window[message + 1]).toContain("<volatile_context");
    expect(window[message + 2]).toContain('"function_call"');
    await session.close();
  });

  test("git status is a delta: unchanged lines are not sent again, new and gone ones are", async () => {
    const root = await makeGitWorkspace({ "src/a.ts": "export const a = 1;\n" });
    server.enqueue(
      textStream("Hello."),
      toolCallStream([{ name: "write_file", arguments: { path: "notes.md", content: "# notes\n" } }]),
      textStream("Written."),
      textStream("Fine."),
      textStream("Gone, then."),
    );
    const { session } = await openAgent(root, server, { settings: { approvals: "auto-edit" } });
    await runTurn(session, "hello");
    await runTurn(session, "write notes.md");
    await runTurn(session, "and now?");
    // Turn 2: git as turn 1 showed it; only turn 1's block carries it.
    expect(occurrences(text(1), "?? src/")).toBe(1);
    expect(occurrences(text(1), "git: branch")).toBe(1);
    // Turn 3: the new file is told once, with the branch line; the unchanged line is not repeated.
    const third = text(3);
    expect(occurrences(third, "git: branch")).toBe(2);
    expect(occurrences(third, "?? notes.md")).toBe(1);
    expect(occurrences(third, "?? src/")).toBe(1);
    expect(third).toContain("2 changed");
    // A file that leaves the status is told as gone.
    rmSync(join(root, "notes.md"));
    await runTurn(session, "I removed it");
    expect(text(4)).toContain("no longer listed: ?? notes.md");
    expect(occurrences(text(4), "git: branch")).toBe(3);
    await session.close();
  });

  test("a state change is sent once, in the turn after it", async () => {
    const root = await makeGitWorkspace();
    server.enqueue(
      toolCallStream([{ name: "memory_set_goal", arguments: { goal: "Ship the v1 parser" } }]),
      textStream("Goal set."),
      textStream("On it."),
      textStream("Still on it."),
    );
    const { session } = await openAgent(root, server);
    await runTurn(session, "our goal: ship the v1 parser");
    await runTurn(session, "go on");
    await runTurn(session, "and on");
    const second = text(2);
    expect(second).toContain("<working_state_changes");
    expect(occurrences(second, "Ship the v1 parser")).toBeGreaterThanOrEqual(1);
    // Turn 3 repeats turn 2's request (its changes included) and adds no new changes block.
    expect(isPrefix(2, 3)).toBe(true);
    expect(occurrences(text(3), "<working_state_changes")).toBe(1);
    const contexts = recordsOf(session, "turn_context");
    expect(contexts.map((r) => r.turn)).toContain(2);
    expect(contexts.find((r) => r.turn === 2)?.state).toMatchObject({ goal: "Ship the v1 parser" });
    await session.close();
  });

  test("after a restart the window shows each turn's part byte for byte: the resumed request repeats the last one", async () => {
    const root = await makeGitWorkspace({ "src/a.ts": "export const a = 1;\n" });
    server.enqueue(toolCallStream([{ name: "read_file", arguments: { path: "src/a.ts" } }]), textStream("a is 1."), textStream("Resumed."));
    const first = await openAgent(root, server);
    await runTurn(first.session, "what is a?");
    await first.session.close();
    const again = await openAgent(root, server, { resume: { kind: "latest" } });
    await runTurn(again.session, "still there?");
    expect(isPrefix(1, 2)).toBe(true);
    await again.session.close();
  });
});

describe("the per-turn part read back from a transcript", () => {
  const ts = "2026-11-23T00:00:00.000Z";
  const options = { shortBufferTurns: 20, windowBlockTurns: 3, workingSetTokens: 4000, overflowPolicy: "priority" as const, countTokens: (s: string) => s.length };
  const turn = (n: number, state?: Record<string, unknown>): TranscriptRecord[] => [
    { v: 1, ts, kind: "user", turn: n, text: `message ${n}` },
    { v: 1, ts, kind: "turn_context", turn: n, state_changes: "", context: `<volatile_context>\ntime: t${n}\n</volatile_context>\n`, shown: { time: `t${n}` }, ...(state && { state }) },
    { v: 1, ts, kind: "assistant", turn: n, step: 1, text: `answer ${n}` },
    { v: 1, ts, kind: "turn_end", turn: n, steps: 1, stop_reason: "completed" },
  ];
  const snapshot: TranscriptRecord = { v: 1, ts, kind: "state_snapshot", turn: 1, state: emptyState() as unknown as Record<string, unknown> };

  test("each turn gets its part; the latest state its changes showed is what the next changes count from", () => {
    const later = { ...emptyState(), goal: "later goal" } as unknown as Record<string, unknown>;
    const memory = ShortTermMemory.fromRecords([snapshot, ...turn(1), ...turn(2, later)], options);
    expect(memory.window.turns.map((t) => t.context?.shown.time)).toEqual(["t1", "t2"]);
    expect(snapshotSource(memory, "f.jsonl").stateSeen).toMatchObject({ turn: 2, state: { goal: "later goal" } });
  });

  test("a fold after it, or a state that does not validate, makes the changes count from the snapshot again", () => {
    const later = { ...emptyState(), goal: "later goal" } as unknown as Record<string, unknown>;
    const fold: TranscriptRecord = { v: 1, ts, kind: "summary", from_turn: 1, through_turn: 2, text: "s", summarizer: "extractive", reason: "budget" };
    const folded = ShortTermMemory.fromRecords([snapshot, ...turn(1), ...turn(2, later), fold, ...turn(3)], options);
    expect(snapshotSource(folded, "f.jsonl").stateSeen).toBeUndefined();
    const hostile = ShortTermMemory.fromRecords([snapshot, ...turn(1, { goal: 5, tasks_open: "all" })], options);
    const source = snapshotSource(hostile, "f.jsonl");
    expect(source.stateSnapshot).toBeDefined();
    expect(source.stateSeen).toBeUndefined();
  });
});
