import { afterAll, describe, expect, test } from "bun:test";
import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { emptyState } from "../../src/state/schema.ts";
import { validateState } from "../../src/state/validate.ts";
import { cleanupTempDirs, makeTempDir, readUntil, runCli, spawnCli } from "../support/cli.ts";

afterAll(cleanupTempDirs);

const STATE = ".valarmind/memory/state.json";

async function initialized(): Promise<string> {
  const dir = await makeTempDir();
  const r = await runCli(["init"], { cwd: dir });
  if (r.code !== 0) throw new Error(`init failed: ${r.stderr}`);
  return dir;
}

async function stateOf(dir: string): Promise<unknown> {
  return JSON.parse(await readFile(join(dir, STATE), "utf8"));
}

describe("valarmind state show cannot act on the terminal", () => {
  test("a goal and a convention holding control sequences (the model and a clone write the state): the view shows them inert, --json escapes them and parses back exact", async () => {
    const dir = await initialized();
    const state = emptyState(new Date("2026-01-01T00:00:00Z"));
    state.goal = "ship\u001b]52;c;ZXZpbA==\u0007 it\u001b[2J";
    state.conventions["evil\u202e"] = "rule\u009b31m";
    await writeFile(join(dir, STATE), JSON.stringify(state));
    const view = await runCli(["state", "show"], { cwd: dir });
    expect(view.code).toBe(0);
    expect(view.stdout).toContain("goal: ship it");
    expect(view.stdout).toContain("evil<U+202E>: rule<U+009B>31m");
    expect(view.stdout).not.toMatch(/[\u0007\u001b\u009b\u202e]/);
    const json = await runCli(["state", "show", "--json"], { cwd: dir });
    expect(json.stdout).not.toMatch(/[\u009b\u202e]/);
    expect((JSON.parse(json.stdout) as { goal: string }).goal).toBe(state.goal);
  });
});

describe("valarmind state", () => {
  test("each change prints what changed; show prints a readable view", async () => {
    const dir = await initialized();
    const steps: [string[], string][] = [
      [["state", "goal", "ship", "the", "memory"], 'goal: (empty) → "ship the memory"'],
      [["state", "now", "writing tests"], 'now: (empty) → "writing tests"'],
      [["state", "decision", "add", "Use TOON", "--why", "fewer tokens"], "added decision ADR-0001: Use TOON"],
      [["state", "task", "add", "Write store", "--file", "src/state/store.ts", "--note", "atomic"], "added task T-1 (open): Write store"],
      [["state", "task", "add", "Wire prompt"], "added task T-2 (open): Wire prompt"],
      [["state", "task", "update", "T-1", "--status", "in_progress"], "task T-1: status open → in_progress"],
      [["state", "task", "block", "2", "waiting", "for", "T-1"], "task T-2: status open → blocked; added blocker B-1: waiting for T-1"],
      [["state", "blocker", "add", "CI runner offline"], "added blocker B-2: CI runner offline"],
      [["state", "blocker", "clear", "B-1"], "cleared blocker B-1: waiting for T-1; task T-2: status blocked → open"],
      [["state", "task", "done", "T-1"], "task T-1: status in_progress → done (Write store)"],
      [["state", "convention", "set", "testing", "bun", "test"], 'convention testing: set to "bun test"'],
      [["state", "convention", "set", "tmp", "x"], 'convention tmp: set to "x"'],
      [["state", "convention", "unset", "tmp"], 'convention tmp: removed (was "x")'],
    ];
    for (const [args, expected] of steps) {
      const r = await runCli(args, { cwd: dir });
      expect({ args, code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({ args, code: 0, stdout: `${expected}\n`, stderr: "" });
    }
    const state = await stateOf(dir);
    expect(validateState(state, STATE).ok).toBe(true);
    const show = await runCli(["state", "show"], { cwd: dir });
    expect(show.code).toBe(0);
    expect(show.stdout).toContain("goal: ship the memory");
    expect(show.stdout).toContain("T-2    [open]");
    expect(show.stdout).toContain("(1 done hidden; --all shows them)");
    expect(show.stdout).toContain("ADR-0001");
    expect(show.stdout).not.toContain("\u001b["); // NO_COLOR and not a TTY
    expect((await runCli(["state", "show", "--all"], { cwd: dir })).stdout).toContain("T-1    [done]");
    expect(JSON.parse((await runCli(["state", "show", "--json"], { cwd: dir })).stdout)).toEqual(state);
    const toon = await runCli(["state", "show", "--toon"], { cwd: dir });
    expect(toon.stdout).toStartWith("goal: ship the memory\nnow: writing tests\n");
    expect(toon.stdout).not.toContain("T-1,");
  });

  test("mistakes are usage errors (exit 2) that say what to do, and change nothing", async () => {
    const dir = await initialized();
    const before = await readFile(join(dir, STATE), "utf8");
    const unknown = await runCli(["state", "task", "done", "T-7"], { cwd: dir });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("no task with id T-7");
    expect(unknown.stderr).toContain("valarmind state show");
    const status = await runCli(["state", "task", "add", "x", "--status", "later"], { cwd: dir });
    expect(status.code).toBe(2);
    expect(status.stderr).toContain('unknown task status "later"');
    const missingWhy = await runCli(["state", "decision", "add", "x"], { cwd: dir });
    expect(missingWhy.code).toBe(2);
    expect(missingWhy.stderr).toContain("--why");
    expect(await readFile(join(dir, STATE), "utf8")).toBe(before);
  });

  test("broken JSON is kept aside, the user is told where, and the change lands on a fresh state", async () => {
    const dir = await initialized();
    await writeFile(join(dir, STATE), '{"goal": "half');
    const r = await runCli(["state", "goal", "fresh"], { cwd: dir });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/state\.json was not valid JSON .*\n {2}It was kept as .*state\.json\.corrupt-\S+; a fresh state starts\./);
    const names = await readdir(join(dir, ".valarmind/memory"));
    const aside = names.find((n) => n.startsWith("state.json.corrupt-"));
    expect(aside).toBeDefined();
    expect(await readFile(join(dir, ".valarmind/memory", aside ?? ""), "utf8")).toBe('{"goal": "half');
    expect(await stateOf(dir)).toMatchObject({ goal: "fresh", tasks_open: [] });
  });

  test("a schema violation names the file and JSON pointer; show leaves the file (exit 2), a change keeps it aside", async () => {
    const dir = await initialized();
    const invalid = JSON.stringify({ ...emptyState(), decisions_recent: [{ id: "ADR-0001", title: "x", why: "y", ts: "last tuesday" }] });
    await writeFile(join(dir, STATE), invalid);
    const r = await runCli(["state", "show"], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${join(dir, STATE)}: /decisions_recent/0/ts: must be a date-time string`);
    expect(r.stdout).toBe("");
    expect(await readFile(join(dir, STATE), "utf8")).toBe(invalid);
    const change = await runCli(["state", "now", "fresh"], { cwd: dir });
    expect(change.code).toBe(0);
    expect(change.stderr).toContain("It was kept as");
  });

  test("a state from a newer valarmind is refused with exit 2 and left untouched", async () => {
    const dir = await initialized();
    const newer = JSON.stringify({ ...emptyState(), schema_version: 7, future_field: [] });
    await writeFile(join(dir, STATE), newer);
    for (const args of [["state", "show"], ["state", "goal", "x"], ["compact"]]) {
      const r = await runCli(args, { cwd: dir });
      expect({ args, code: r.code }).toEqual({ args, code: 2 });
      expect(r.stderr).toContain("written by a newer valarmind (schema_version 7; this one reads up to 1)");
      expect(r.stderr).toContain("Upgrade valarmind");
    }
    expect(await readFile(join(dir, STATE), "utf8")).toBe(newer);
    expect((await readdir(join(dir, ".valarmind/memory"))).sort()).toEqual(["schemas", "state.json", "state.toon"]);
  });

  test("20 concurrent 'state task add' processes all land", async () => {
    const dir = await initialized();
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => runCli(["state", "task", "add", `parallel task ${i}`], { cwd: dir })),
    );
    for (const r of results) expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    const state = (await stateOf(dir)) as { tasks_open: { id: string; title: string }[] };
    expect(state.tasks_open).toHaveLength(20);
    expect(new Set(state.tasks_open.map((t) => t.id)).size).toBe(20);
    expect(state.tasks_open.map((t) => t.title).sort()).toEqual(Array.from({ length: 20 }, (_, i) => `parallel task ${i}`).sort());
  }, 30_000);

  test("a writer killed mid-write leaves the previous valid file, and the next write goes through", async () => {
    const dir = await initialized();
    await runCli(["state", "goal", "before the crash"], { cwd: dir });
    const before = await readFile(join(dir, STATE), "utf8");
    const writer = spawnCli(["state", "goal", "never lands"], { cwd: dir, env: { VALARMIND_TEST_HOLD_AFTER_TEMP: "1" } });
    const announced = await readUntil(writer.stderr, (text) => text.includes("valarmind-test: temp written"));
    const temp = announced.match(/temp written (\S+)/)?.[1] ?? "";
    expect(JSON.parse(await readFile(temp, "utf8")).goal).toBe("never lands"); // the new content was fully in the temp file
    writer.kill("SIGKILL");
    expect(await writer.exited).not.toBe(0);
    expect(await readFile(join(dir, STATE), "utf8")).toBe(before);
    const show = await runCli(["state", "show", "--json"], { cwd: dir });
    expect(show.code).toBe(0);
    expect(JSON.parse(show.stdout).goal).toBe("before the crash");
    // The dead writer's lock is taken over at once (its pid is gone); its temp file is cleaned up.
    const next = await runCli(["state", "now", "recovered"], { cwd: dir });
    expect({ code: next.code, stderr: next.stderr }).toEqual({ code: 0, stderr: "" });
    expect(await stateOf(dir)).toMatchObject({ goal: "before the crash", now: "recovered" });
    expect((await readdir(join(dir, ".valarmind/memory"))).filter((n) => n.includes(".tmp-"))).toEqual([]);
  }, 30_000);
});
