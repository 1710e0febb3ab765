import { afterAll, describe, expect, test } from "bun:test";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { workspacePaths, type WorkspacePaths } from "../../src/config/paths.ts";
import { UsageError, ValarmindError } from "../../src/errors.ts";
import type { Migration } from "../../src/state/migrations.ts";
import * as ops from "../../src/state/ops.ts";
import { emptyState } from "../../src/state/schema.ts";
import { serializeState, FileStateStore } from "../../src/state/store.ts";
import { cleanupTempDirs, makeTempDir } from "../support/cli.ts";

afterAll(cleanupTempDirs);

const fixed = new Date("2026-03-01T08:00:00.000Z");

async function workspace(): Promise<WorkspacePaths> {
  const paths = workspacePaths(await makeTempDir());
  await mkdir(paths.memoryDir, { recursive: true });
  return paths;
}

describe("FileStateStore", () => {
  test("a missing file reads as the empty state and nothing is written", async () => {
    const paths = await workspace();
    const read = await new FileStateStore(paths, { clock: () => fixed }).read();
    expect(read.source).toBe("missing");
    expect(read.state).toEqual(emptyState(fixed));
    expect(await readdir(paths.memoryDir)).toEqual([]);
  });

  test("update applies an op, stamps updated_at and writes valid pretty JSON", async () => {
    const paths = await workspace();
    const store = new FileStateStore(paths, { clock: () => fixed });
    const result = await store.update((s) => ops.addTask(s, "write the store", {}, fixed));
    expect(result).toMatchObject({ written: true, change: "added task T-1 (open): write the store" });
    const raw = await readFile(paths.stateJson, "utf8");
    expect(raw).toBe(serializeState(result.state));
    expect(JSON.parse(raw).updated_at).toBe(fixed.toISOString());
    expect((await store.read()).state.tasks_open).toHaveLength(1);
  });

  test("an op that changes nothing leaves the file alone", async () => {
    const paths = await workspace();
    const store = new FileStateStore(paths, { clock: () => fixed });
    await store.update((s) => ops.setGoal(s, "g"));
    const before = await readFile(paths.stateJson, "utf8");
    const later = new FileStateStore(paths, { clock: () => new Date("2030-01-01T00:00:00Z") });
    const r = await later.update((s) => s);
    expect(r.written).toBe(false);
    expect(await readFile(paths.stateJson, "utf8")).toBe(before);
  });

  test("an invalid result is refused and nothing is written", async () => {
    const paths = await workspace();
    const store = new FileStateStore(paths, { clock: () => fixed });
    await store.update((s) => ops.setGoal(s, "g"));
    const before = await readFile(paths.stateJson, "utf8");
    const bad = store.update((s) => ({ ...s, tasks_open: [{ id: "X", title: "", status: "open", updated_at: "now" }] }));
    await expect(bad).rejects.toThrow(ValarmindError);
    await expect(store.update((s) => ({ ...s, goal: 5 as unknown as string }))).rejects.toThrow("/goal: must be string");
    expect(await readFile(paths.stateJson, "utf8")).toBe(before);
  });

  test("read never writes: an unparsable file is reported (source invalid, a problem, a notice) and left", async () => {
    const paths = await workspace();
    await writeFile(paths.stateJson, '{"schema_version": 1, "goal": ');
    const read = await new FileStateStore(paths, { clock: () => fixed }).read();
    expect(read.source).toBe("invalid");
    expect(read.state).toEqual(emptyState(fixed));
    expect(read.problem).toContain(`${paths.stateJson} is not valid JSON`);
    expect(read.notices[0]).toContain("It was left as it is");
    expect(await readdir(paths.memoryDir)).toEqual(["state.json"]);
  });

  test("recover: unparsable JSON is moved aside, the notice says where, and a fresh state starts", async () => {
    const paths = await workspace();
    await writeFile(paths.stateJson, '{"schema_version": 1, "goal": ');
    const read = await new FileStateStore(paths, { clock: () => fixed }).recover();
    expect(read.source).toBe("recovered");
    expect(read.state).toEqual(emptyState(fixed));
    const aside = `${paths.stateJson}.corrupt-2026-03-01T08-00-00-000Z`;
    expect(read.notices[0]).toContain("not valid JSON");
    expect(read.notices[0]).toContain(aside);
    expect(await readFile(aside, "utf8")).toBe('{"schema_version": 1, "goal": ');
  });

  test("two corrupt files in the same millisecond do not overwrite each other", async () => {
    const paths = await workspace();
    const store = new FileStateStore(paths, { clock: () => fixed });
    await writeFile(paths.stateJson, "first");
    await store.recover();
    await writeFile(paths.stateJson, "second");
    const read = await store.recover();
    expect(read.notices[0]).toContain("corrupt-2026-03-01T08-00-00-000Z-2");
    const names = (await readdir(paths.memoryDir)).sort();
    expect(names).toEqual(["state.json.corrupt-2026-03-01T08-00-00-000Z", "state.json.corrupt-2026-03-01T08-00-00-000Z-2"]);
  });

  test("a schema violation is moved aside by update, which then applies its op to a fresh state", async () => {
    const paths = await workspace();
    const invalid = { ...emptyState(fixed), tasks_open: [{ id: "T-1", title: "x", status: "later", updated_at: fixed.toISOString() }] };
    await writeFile(paths.stateJson, JSON.stringify(invalid));
    const r = await new FileStateStore(paths, { clock: () => fixed }).update((s) => ops.setGoal(s, "again"));
    expect(r.notices[0]).toContain("/tasks_open/0/status: must be one of");
    expect(r.state.goal).toBe("again");
    expect(r.state.tasks_open).toEqual([]);
    expect((await readdir(paths.memoryDir)).some((n) => n.startsWith("state.json.corrupt-"))).toBe(true);
  });

  test("a file from a newer valarmind is refused with a usage error and left untouched", async () => {
    const paths = await workspace();
    const newer = JSON.stringify({ ...emptyState(fixed), schema_version: 99, extra: true });
    await writeFile(paths.stateJson, newer);
    const store = new FileStateStore(paths, { clock: () => fixed });
    await expect(store.read()).rejects.toThrow(UsageError);
    await expect(store.update((s) => ops.setGoal(s, "x"))).rejects.toThrow("schema_version 99");
    expect(await readFile(paths.stateJson, "utf8")).toBe(newer);
    expect(await readdir(paths.memoryDir)).toEqual(["state.json"]);
  });

  test("an older file is migrated by the registry (synthetic v0 → v1) and written at v1", async () => {
    const paths = await workspace();
    const v0 = { schema_version: 0, updated_at: fixed.toISOString(), objective: "old name", now: "", decisions: [], tasks: [] };
    await writeFile(paths.stateJson, JSON.stringify(v0));
    const rename: Migration = {
      from: 0,
      describe: "objective → goal, decisions → decisions_recent, tasks → tasks_open, add blockers and conventions",
      up: ({ objective, decisions, tasks, ...rest }) => ({ ...rest, goal: objective, decisions_recent: decisions, tasks_open: tasks, blockers: [], conventions: {} }),
    };
    const store = new FileStateStore(paths, { clock: () => fixed, migrations: [rename] });
    const read = await store.read();
    expect(read.source).toBe("migrated");
    expect(read.state.goal).toBe("old name");
    expect(read.notices[0]).toContain("v0→v1");
    expect(JSON.parse(await readFile(paths.stateJson, "utf8")).schema_version).toBe(0); // reading does not write
    const r = await store.update((s) => s);
    expect(r.written).toBe(true);
    expect(JSON.parse(await readFile(paths.stateJson, "utf8"))).toMatchObject({ schema_version: 1, goal: "old name" });
  });

  test("schema_version 0 (older than any format valarmind wrote) is not guessed at: kept aside by recover", async () => {
    const paths = await workspace();
    await writeFile(paths.stateJson, JSON.stringify({ schema_version: 0 }));
    const read = await new FileStateStore(paths, { clock: () => fixed }).recover();
    expect(read.source).toBe("recovered");
    expect(read.notices[0]).toContain("was not a valarmind state file: its schema_version is 0");
  });

  test("a lone surrogate is read as U+FFFD with a notice naming the pointer; read leaves the file, the next change writes it", async () => {
    const paths = await workspace();
    const raw = JSON.stringify({ ...emptyState(fixed), goal: "aXb", conventions: { "kYey": "v" } }).replace("X", "\\ud800").replace("Y", "\\udc00");
    await writeFile(paths.stateJson, raw);
    const store = new FileStateStore(paths, { clock: () => fixed });
    const read = await store.read();
    expect(read.state.goal).toBe("a\ufffdb");
    expect(read.state.conventions).toEqual({ "k\ufffdey": "v" });
    expect(read.notices.map((n) => n.split(": ")[1])).toEqual(["/goal", "/conventions/k\ufffdey (the name)"]);
    expect(await readFile(paths.stateJson, "utf8")).toBe(raw);
    const r = await store.update((s) => s);
    expect(r.written).toBe(true);
    expect(JSON.parse(await readFile(paths.stateJson, "utf8")).goal).toBe("a\ufffdb");
  });

  test("temp files left by a killed writer are removed by the next update", async () => {
    const paths = await workspace();
    await writeFile(`${paths.stateJson}.tmp-12345-abc`, "{half");
    await new FileStateStore(paths).update((s) => ops.setGoal(s, "g"));
    expect(await readdir(paths.memoryDir)).toEqual(["state.json"]);
  });

  test("concurrent updates in one process all land", async () => {
    const paths = await workspace();
    const store = new FileStateStore(paths);
    await Promise.all(Array.from({ length: 10 }, (_, i) => store.update((s) => ops.addTask(s, `task ${i}`))));
    const { state } = await store.read();
    expect(state.tasks_open.map((t) => t.id).sort()).toEqual(Array.from({ length: 10 }, (_, i) => `T-${i + 1}`).sort());
  });

  test("a byte-order mark and an editor's $schema key are accepted and kept", async () => {
    const paths = await workspace();
    const doc = { $schema: "./schemas/state.schema.json", ...emptyState(fixed), goal: "bom" };
    await writeFile(paths.stateJson, `\ufeff${JSON.stringify(doc)}`);
    const store = new FileStateStore(paths, { clock: () => fixed });
    expect((await store.read()).state.goal).toBe("bom");
    await store.update((s) => ops.setNow(s, "x"));
    expect(JSON.parse(await readFile(paths.stateJson, "utf8")).$schema).toBe("./schemas/state.schema.json");
  });
});
