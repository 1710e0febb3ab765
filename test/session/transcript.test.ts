import { afterAll, describe, expect, test } from "bun:test";
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { workspacePaths } from "../../src/config/paths.ts";
import { UsageError, ValarmindError } from "../../src/errors.ts";
import {
  createSession,
  describeSession,
  findSession,
  latestSession,
  listSessions,
  openSession,
  readSession,
} from "../../src/session/transcript.ts";
import { cleanupTempDirs, makeTempDir } from "../support/cli.ts";

afterAll(cleanupTempDirs);

async function workspace() {
  return workspacePaths(await makeTempDir());
}

describe("session transcript", () => {
  test("creates a versioned JSONL file named <time>-<id>.jsonl and reads it back", async () => {
    const paths = await workspace();
    const session = createSession(paths, { model: "gpt-5.5", cwd: paths.root, id: "abcd1234", now: new Date("2026-01-31T12:00:00Z") });
    expect(session.file.endsWith("sessions/2026-01-31T12-00-00-abcd1234.jsonl")).toBe(true);
    expect(session.dir.endsWith("sessions/abcd1234")).toBe(true);
    session.append({ kind: "user", turn: 1, text: "hello", tokens: 1 });
    session.append([
      { kind: "assistant", turn: 1, step: 1, text: "hi" },
      { kind: "turn_end", turn: 1, steps: 1, stop_reason: "completed", usage: { input: 10, cached: 0, output: 2, reasoning: 0 } },
    ]);
    session.close();
    const lines = readFileSync(session.file, "utf8").trimEnd().split("\n").map((l) => JSON.parse(l));
    expect(lines.every((l) => l.v === 1 && typeof l.ts === "string")).toBe(true);
    const read = readSession(session.file);
    expect(read.header).toMatchObject({ kind: "session", id: "abcd1234", model: "gpt-5.5", cwd: paths.root });
    expect(read.records.map((r) => r.kind)).toEqual(["user", "assistant", "turn_end"]);
    expect(read.tornTail).toBeUndefined();
    expect(describeSession({ id: "abcd1234", file: session.file, dir: session.dir, stamp: "" })).toMatchObject({ turns: 1, firstMessage: "hello" });
  });

  test("refuses to append an invalid record and never overwrites an existing session file", async () => {
    const paths = await workspace();
    const now = new Date("2026-01-31T12:00:00Z");
    const session = createSession(paths, { model: "m", cwd: "/", id: "same1", now });
    // @ts-expect-error: a user record needs a turn
    expect(() => session.append({ kind: "user", text: "no turn" })).toThrow(ValarmindError);
    expect(() => createSession(paths, { model: "m", cwd: "/", id: "same1", now })).toThrow(/already exists/);
    session.close();
  });

  test("a torn last line is tolerated on read and recovered, verbatim, on open", async () => {
    const paths = await workspace();
    const session = createSession(paths, { model: "m", cwd: "/", id: "torn1" });
    session.append({ kind: "user", turn: 1, text: "first" });
    session.close();
    appendFileSync(session.file, '{"v":1,"kind":"assistant","turn":1,"st');
    const read = readSession(session.file);
    expect(read.records.map((r) => r.kind)).toEqual(["user"]);
    expect(read.tornTail).toBe('{"v":1,"kind":"assistant","turn":1,"st');

    const { session: reopened } = openSession(paths, "torn1");
    reopened.append({ kind: "user", turn: 2, text: "second" });
    reopened.close();
    const again = readSession(session.file);
    expect(again.tornTail).toBeUndefined();
    expect(again.records.map((r) => r.kind)).toEqual(["user", "note", "user"]);
    expect(again.records[1]).toMatchObject({ kind: "note", what: "torn_line_recovered", text: '{"v":1,"kind":"assistant","turn":1,"st' });
  });

  test("damage before the last line is skipped and reported with its line (ADR 0072)", async () => {
    const paths = await workspace();
    const session = createSession(paths, { model: "m", cwd: "/", id: "bad01" });
    session.append({ kind: "user", turn: 1, text: "x" });
    session.close();
    const text = readFileSync(session.file, "utf8");
    writeFileSync(session.file, `${text}not json\n${text.split("\n")[1]}\n`);
    const read = readSession(session.file);
    expect(read.damaged).toEqual([{ line: 3, text: "not json", reason: expect.stringContaining("not valid JSON") }]);
    expect(read.records.map((r) => r.kind)).toEqual(["user", "user"]);
  });

  test("a record from a newer valarmind is a usage error", async () => {
    const paths = await workspace();
    const session = createSession(paths, { model: "m", cwd: "/", id: "newer" });
    session.close();
    appendFileSync(session.file, `${JSON.stringify({ v: 2, kind: "user", ts: "x", turn: 1, text: "?" })}\n`);
    expect(() => readSession(session.file)).toThrow(UsageError);
  });

  test("API keys never reach disk", async () => {
    const paths = await workspace();
    const key = "sk-proj-THISISAFAKEKEY0123456789abcdef";
    const before = process.env.OPENAI_API_KEY;
    process.env.OPENAI_API_KEY = "custom-key-value-42";
    try {
      const session = createSession(paths, { model: "m", cwd: "/", id: "keys1" });
      session.append({ kind: "tool_call", turn: 1, step: 1, call_id: "c1", name: "run_shell", arguments: "{}", output: `OPENAI_API_KEY=custom-key-value-42 ${key}`, summary: "env", is_error: false });
      session.close();
      const text = readFileSync(session.file, "utf8");
      expect(text).not.toContain("custom-key-value-42");
      expect(text).not.toContain(key);
      expect(text).toContain("[redacted:OPENAI_API_KEY]");
    } finally {
      if (before === undefined) delete process.env.OPENAI_API_KEY;
      else process.env.OPENAI_API_KEY = before;
    }
  });

  test("lists sessions oldest first, finds by id prefix, and reports ambiguity", async () => {
    const paths = await workspace();
    expect(latestSession(paths)).toBeUndefined();
    createSession(paths, { model: "m", cwd: "/", id: "aaa111", now: new Date("2026-01-01T00:00:00Z") }).close();
    createSession(paths, { model: "m", cwd: "/", id: "aaa222", now: new Date("2026-01-02T00:00:00Z") }).close();
    createSession(paths, { model: "m", cwd: "/", id: "bbb333", now: new Date("2026-01-03T00:00:00Z") }).close();
    expect(listSessions(paths).map((s) => s.id)).toEqual(["aaa111", "aaa222", "bbb333"]);
    expect(latestSession(paths)?.id).toBe("bbb333");
    expect(findSession(paths, "aaa2").id).toBe("aaa222");
    expect(() => findSession(paths, "aaa")).toThrow(/ambiguous/);
    expect(() => findSession(paths, "zzz")).toThrow(/no session 'zzz'/);
  });
});

describe("latestSession with sessions started in the same second", () => {
  test("picks the one whose header started last, whatever the random ids sort to", async () => {
    const root = await makeTempDir();
    const paths = workspacePaths(root);
    const second = new Date("2026-03-01T10:00:00.100Z");
    const later = new Date("2026-03-01T10:00:00.900Z");
    createSession(paths, { model: "m", cwd: root, id: "zzzz1111", now: second }).close();
    createSession(paths, { model: "m", cwd: root, id: "aaaa2222", now: later }).close();
    // By file name alone "zzzz1111" sorts last, but "aaaa2222" started later in the same second.
    expect(latestSession(paths)?.id).toBe("aaaa2222");
    // Listings (`sessions list`, the picker, /resume without an id) follow the same order.
    createSession(paths, { model: "m", cwd: root, id: "mmmm3333", now: new Date("2026-03-01T10:00:00.500Z") }).close();
    createSession(paths, { model: "m", cwd: root, id: "bbbb0000", now: new Date("2026-03-01T09:59:59.999Z") }).close();
    expect(listSessions(paths).map((ref) => ref.id)).toEqual(["bbbb0000", "zzzz1111", "mmmm3333", "aaaa2222"]);
  });

  test("a same-second session whose header cannot be read sorts first in its second, and is still listed", async () => {
    const root = await makeTempDir();
    const paths = workspacePaths(root);
    createSession(paths, { model: "m", cwd: root, id: "aaaa1111", now: new Date("2026-03-01T10:00:00.900Z") }).close();
    createSession(paths, { model: "m", cwd: root, id: "zzzz2222", now: new Date("2026-03-01T10:00:00.100Z") }).close();
    writeFileSync(join(paths.sessionsDir, "2026-03-01T10-00-00-mmmm9999.jsonl"), "not json\n");
    expect(listSessions(paths).map((ref) => ref.id)).toEqual(["mmmm9999", "zzzz2222", "aaaa1111"]);
    expect(latestSession(paths)?.id).toBe("aaaa1111");
  });
});
