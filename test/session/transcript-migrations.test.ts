/**
 * Transcript migrations (ADR 0078). Version 1 is the first released format, so these tests read a
 * synthetic version 0 through a synthetic step 0 → 1, the way a real step will be added:
 * before tool results became summaries (ADR 0060), say, a `tool_call` held one `result`, and the
 * header named the program version `version`.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { workspacePaths, type WorkspacePaths } from "../../src/config/paths.ts";
import { UsageError } from "../../src/errors.ts";
import { openSessionMemory } from "../../src/memory/session-memory.ts";
import { damagedSideFile } from "../../src/session/damaged-lines.ts";
import { lockSession, releaseSessionLock } from "../../src/session/session-lock.ts";
import { latestSession, OlderTranscriptError, openSession, readSession, UnreadableTranscriptError } from "../../src/session/transcript.ts";
import { migrateRecord, TRANSCRIPT_MIGRATIONS, type RawRecord, type TranscriptMigration } from "../../src/session/transcript-migrations.ts";
import { TRANSCRIPT_VERSION } from "../../src/session/transcript-schema.ts";
import { testSettings } from "../agent/support/agent-harness.ts";
import { cleanupTempDirs, makeTempDir } from "../support/cli.ts";

afterAll(cleanupTempDirs);

/** The synthetic step: `result` becomes `output` and a one-line `summary`; `version` becomes `valarmind`. */
const V0_TO_V1: TranscriptMigration = {
  from: 0,
  describe: "tool_call.result → output + summary; session.version → valarmind",
  up(record: RawRecord): RawRecord {
    if (record.kind === "session") {
      const { version, ...rest } = record;
      return { ...rest, valarmind: typeof version === "string" ? version : "unknown" };
    }
    if (record.kind === "tool_call") {
      const { result, ...rest } = record;
      if (typeof result !== "string") throw new Error("a version 0 tool_call needs a string result");
      return { ...rest, output: result, summary: result.split("\n")[0] ?? "" };
    }
    return record;
  },
};
const SYNTHETIC = [V0_TO_V1];

const ts = (minute: number) => `2026-02-01T10:${String(minute).padStart(2, "0")}:00.000Z`;
const V0_HEADER = { v: 0, kind: "session", ts: ts(0), id: "old00001", started_at: ts(0), cwd: "/w", model: "gpt-old", version: "0.0.1" };
const V0_TURN = [
  { v: 0, kind: "user", ts: ts(1), turn: 1, text: "read the readme" },
  { v: 0, kind: "tool_call", ts: ts(2), turn: 1, step: 1, call_id: "c1", name: "read_file", arguments: '{"path":"README.md"}', result: "# demo\nmore", is_error: false },
  { v: 0, kind: "assistant", ts: ts(3), turn: 1, step: 2, text: "It is a demo." },
  { v: 0, kind: "turn_end", ts: ts(3), turn: 1, steps: 2, stop_reason: "completed" },
];

const lines = (records: readonly unknown[]) => records.map((r) => `${JSON.stringify(r)}\n`).join("");

async function workspaceWith(text: string, id = V0_HEADER.id): Promise<{ paths: WorkspacePaths; file: string }> {
  const paths = workspacePaths(await makeTempDir());
  mkdirSync(paths.sessionsDir, { recursive: true });
  const file = join(paths.sessionsDir, `2026-02-01T10-00-00-${id}.jsonl`);
  writeFileSync(file, text);
  return { paths, file };
}

const countTokens = (text: string) => Math.ceil(text.length / 4);

describe("migrateRecord (pure)", () => {
  test("a current record passes as it is; valarmind's own chain is empty at version 1", () => {
    const record = { v: TRANSCRIPT_VERSION, kind: "user", ts: ts(1), turn: 1, text: "hi" };
    expect(migrateRecord(record)).toEqual({ kind: "current", value: record });
    expect(TRANSCRIPT_VERSION).toBe(1);
    expect(TRANSCRIPT_MIGRATIONS).toEqual([]);
  });

  test("steps chain one version at a time and stamp each version", () => {
    const seen: number[] = [];
    const step = (from: number): TranscriptMigration => ({ from, describe: `step ${from}`, up: (r) => (seen.push(Number(r.v)), { ...r, [`at${from}`]: true }) });
    expect(migrateRecord({ v: 0, kind: "note" }, [step(1), step(0)], 2)).toEqual({
      kind: "migrated",
      record: { v: 2, kind: "note", at0: true, at1: true },
      from: 0,
    });
    expect(seen).toEqual([0, 1]);
  });

  test("newer, older than the first format, a missing step and a failing step are told apart", () => {
    expect(migrateRecord({ v: 7, kind: "user" })).toEqual({ kind: "newer", version: 7 });
    expect(migrateRecord({ v: 0, kind: "user" })).toMatchObject({ kind: "unmigratable", reason: expect.stringContaining("older than any transcript valarmind wrote") });
    expect(migrateRecord({ v: 0, kind: "user" }, [V0_TO_V1, { ...V0_TO_V1, from: 2 }], 3)).toMatchObject({ kind: "unmigratable", reason: expect.stringContaining("no migration from 1 to 2") });
    expect(migrateRecord({ v: 0, kind: "tool_call", result: 5 }, SYNTHETIC)).toMatchObject({ kind: "unmigratable", reason: expect.stringContaining("needs a string result") });
  });
});

describe("an older transcript", () => {
  test("is read migrated, and reading never writes", async () => {
    const text = lines([V0_HEADER, ...V0_TURN]);
    const { file } = await workspaceWith(text);
    const read = readSession(file, SYNTHETIC);
    expect(read.version).toBe(0);
    expect(read.header).toMatchObject({ v: 1, id: "old00001", valarmind: "0.0.1" });
    expect(read.records.map((r) => r.kind)).toEqual(["user", "tool_call", "assistant", "turn_end"]);
    expect(read.records.every((r) => r.v === TRANSCRIPT_VERSION)).toBe(true);
    expect(read.records[1]).toMatchObject({ output: "# demo\nmore", summary: "# demo", ts: ts(2) });
    expect(read.damaged).toEqual([]);
    expect(readFileSync(file, "utf8")).toBe(text);
  });

  test("is never appended to: openSession refuses it before writing anything", async () => {
    const text = `${lines([V0_HEADER, ...V0_TURN])}{"v":0,"kind":"user","tur`;
    const { paths, file } = await workspaceWith(text);
    let thrown: unknown;
    try {
      openSession(paths, "old00001", SYNTHETIC);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(OlderTranscriptError);
    expect(String(thrown)).toContain(`${file} was written by an older valarmind (transcript version 0`);
    // The torn last line is not cut off and no side file appears: the file is left as it was.
    expect(readFileSync(file, "utf8")).toBe(text);
    expect(existsSync(damagedSideFile(file))).toBe(false);
  });

  test("is continued in a new session in the current format, the old file kept byte for byte", async () => {
    const text = lines([V0_HEADER, ...V0_TURN]);
    const { paths, file } = await workspaceWith(text);
    const opened = await openSessionMemory(paths, testSettings(), { kind: "latest" }, countTokens, { waitMs: 0 }, SYNTHETIC);
    try {
      expect(opened.sessionId).not.toBe("old00001");
      expect(opened.resumed).toBe(true);
      expect(opened.notices[0]).toEqual({
        message: expect.stringContaining(`${file} was written by an older valarmind (transcript version 0); session old00001 continues as a new session ${opened.sessionId}`),
        code: "session_forked",
      });
      // The old turn is in the rebuilt window, its tool output as the migrated summary.
      expect(opened.memory.window.turns.map((t) => t.user)).toEqual(["read the readme"]);
      const transcript = opened.transcript;
      if (!transcript) throw new Error("expected the fork's transcript");
      transcript.append([
        { kind: "user", turn: 2, text: "and now?" },
        { kind: "assistant", turn: 2, step: 1, text: "Now in version 1." },
        { kind: "turn_end", turn: 2, steps: 1, stop_reason: "completed" },
      ]);
      transcript.close();
      expect(readFileSync(file, "utf8")).toBe(text);
      // The new file reads with valarmind's own (empty) chain: it is all current.
      const fork = readSession(transcript.file);
      expect(fork.version).toBe(TRANSCRIPT_VERSION);
      expect(fork.records.map((r) => r.kind)).toEqual(["user", "tool_call", "assistant", "turn_end", "note", "user", "assistant", "turn_end"]);
      expect(fork.records[4]).toMatchObject({ kind: "note", what: "forked_from", text: expect.stringContaining("old00001: written in transcript version 0") });
      expect(latestSession(paths)?.id).toBe(opened.sessionId);
    } finally {
      await releaseSessionLock(opened.lock);
    }
  });

  test("with a damaged line: the line is skipped and told, the old file still untouched and no side file written", async () => {
    const text = `${lines([V0_HEADER, V0_TURN[0]])}not json\n${lines(V0_TURN.slice(1))}`;
    const { paths, file } = await workspaceWith(text);
    const opened = await openSessionMemory(paths, testSettings(), { kind: "id", id: "old00001" }, countTokens, { waitMs: 0 }, SYNTHETIC);
    try {
      expect(opened.notices.map((n) => n.code)).toEqual(["session_forked", "transcript_damaged"]);
      expect(opened.notices[1]?.message).toContain(`${file}: line 3 is damaged and skipped`);
      expect(opened.memory.window.turns).toHaveLength(1);
      expect(readFileSync(file, "utf8")).toBe(text);
      expect(existsSync(damagedSideFile(file))).toBe(false);
    } finally {
      opened.transcript?.close();
      await releaseSessionLock(opened.lock);
    }
  });

  test("without a migration for it, it is damaged as before: no header, so it cannot be read", async () => {
    const { file } = await workspaceWith(lines([V0_HEADER, ...V0_TURN]));
    expect(() => readSession(file)).toThrow(UnreadableTranscriptError);
  });
});

describe("a newer transcript", () => {
  test("is refused with a usage error naming the file, the line and what to do; nothing is written", async () => {
    const v1 = { ...V0_HEADER, v: 1, valarmind: "0.1.0" };
    delete (v1 as Record<string, unknown>).version;
    const text = lines([v1, { v: 2, kind: "user", ts: ts(1), turn: 1, text: "from the future" }]);
    const { paths, file } = await workspaceWith(text);
    let thrown: unknown;
    try {
      await openSessionMemory(paths, testSettings(), { kind: "latest" }, countTokens);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(UsageError);
    const error = thrown as UsageError;
    expect(error.message).toContain(`${file}:2: record version 2 is newer than this valarmind understands (1)`);
    expect(error.hint).toContain("Upgrade valarmind");
    expect(error.hint).toContain("the file is left untouched");
    expect(readFileSync(file, "utf8")).toBe(text);
    // The session's lock was let go: the refusal holds nothing.
    const again = await lockSession(paths, "old00001", { waitMs: 0 });
    expect(again.kind).toBe("held");
    if (again.kind === "held") await releaseSessionLock(again.lock);
  });
});
