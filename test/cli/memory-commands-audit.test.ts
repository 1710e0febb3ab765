/**
 * Audit of the memory commands a user runs by hand: `compact`, `prompt --dry-run/--list/--show/--diff`
 * and `state …`, on unusual but valid input. Written as a fault-finding pass; a comment marked
 * "Was" says what a fixed defect did.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { decode } from "@toon-format/toon";
import { workspacePaths } from "../../src/config/paths.ts";
import { buildRequest, exactCounter } from "../../src/prompt/builder.ts";
import { validateManifest, writeManifest } from "../../src/prompt/manifest.ts";
import { createSession } from "../../src/session/transcript.ts";
import { serializeState } from "../../src/state/store.ts";
import type { WorkingState } from "../../src/state/schema.ts";
import { state20x30 } from "../state/state-fixtures.ts";
import { fullInput } from "../prompt/support/build-fixture.ts";
import { agentLikeRecords } from "../prompt/support/synthetic-session.ts";
import { cleanupTempDirs, makeTempDir, runCli, spawnCli } from "../support/cli.ts";

afterAll(cleanupTempDirs);

const STATE = ".valarmind/memory/state.json";
const TOON = ".valarmind/memory/state.toon";
const TS = "2026-01-01T00:00:00.000Z";
const STACK = /\n\s+at .+:\d+:\d+/;

function state(over: Partial<WorkingState> = {}): WorkingState {
  return { schema_version: 1, updated_at: TS, goal: "g", now: "n", decisions_recent: [], tasks_open: [], blockers: [], conventions: {}, ...over };
}

async function workspace(content?: string | WorkingState): Promise<string> {
  const dir = await makeTempDir();
  const r = await runCli(["init"], { cwd: dir });
  if (r.code !== 0) throw new Error(r.stderr);
  if (content !== undefined) writeFileSync(join(dir, STATE), typeof content === "string" ? content : serializeState(content));
  return dir;
}

/** Every path under `root` (symlinks not followed) with its mode, size, mtime and content hash. */
function snapshot(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      const st = lstatSync(path);
      out[path] = `${st.mode}:${st.size}:${st.mtimeMs}`;
      if (st.isDirectory()) walk(path);
      else if (st.isFile()) out[path] += `:${createHash("sha256").update(readFileSync(path)).digest("hex")}`;
    }
  };
  walk(root);
  return out;
}

/** Runs the CLI; a child still running after `ms` is killed and reported as hung (code -1). */
async function runWithin(args: string[], cwd: string, ms: number) {
  const child = spawnCli(args, { cwd });
  const timer = new Promise<"hung">((resolve) => setTimeout(() => resolve("hung"), ms));
  const outcome = await Promise.race([child.exited, timer]);
  if (outcome === "hung") child.kill("SIGKILL");
  await child.exited;
  return { code: outcome === "hung" ? -1 : outcome, stderr: await new Response(child.stderr).text() };
}

describe("compact on hand-edited state.json", () => {
  test("10,000 tasks with RTL, emoji and combining marks, keys in reverse order, CRLF and a BOM: within the cap, every left-out id named, same bytes as the plain file, stable", async () => {
    const titles = ["مرحبا بالعالم", "שלום עולם", "👨‍👩‍👧 family", "é̀̀ combining", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "plain task"];
    const tasks = Array.from({ length: 10_000 }, (_, i) => ({
      id: `T-${i + 1}`,
      title: `${titles[i % titles.length]} ${i + 1}`,
      status: (i % 9 === 0 ? "done" : i % 7 === 0 ? "in_progress" : "open") as WorkingState["tasks_open"][number]["status"],
      updated_at: new Date(Date.UTC(2026, 0, 1, 0, 0, i % 5000)).toISOString(),
    }));
    const plain = state({ goal: "ship ✨ v2 — مرحبا", tasks_open: tasks, conventions: { lang: "TypeScript", "ערך": "שלום" } });
    const reverse = (o: object) => Object.fromEntries(Object.entries(o).reverse());
    const odd = reverse({ ...plain, tasks_open: plain.tasks_open.map(reverse) });
    const a = await workspace(plain);
    const b = await workspace(`\ufeff${JSON.stringify(odd, null, 2).replaceAll("\n", "\r\n")}\r\n`);
    const ra = await runCli(["compact", "--json"], { cwd: a });
    const rb = await runCli(["compact", "--json"], { cwd: b });
    expect({ code: rb.code, stderr: rb.stderr }).toEqual({ code: 0, stderr: "" });
    expect(readFileSync(join(b, TOON), "utf8")).toBe(readFileSync(join(a, TOON), "utf8"));
    const report = JSON.parse(rb.stdout) as { tokens: { toon: number }; omitted: string[] };
    expect(report.tokens.toon).toBeLessThanOrEqual(750);
    const decoded = decode(readFileSync(join(b, TOON), "utf8")) as { tasks_open: { id: string }[]; conventions: Record<string, string> };
    const kept = [...decoded.tasks_open.map((t) => t.id), ...Object.keys(decoded.conventions).map((k) => `conventions.${k}`)];
    const live = [...tasks.filter((t) => t.status !== "done").map((t) => t.id), "conventions.lang", "conventions.ערך"];
    expect([...kept, ...report.omitted].sort()).toEqual(live.sort());
    expect(JSON.parse(ra.stdout).omitted).toEqual(report.omitted);
    const before = readFileSync(join(b, TOON));
    expect(JSON.parse((await runCli(["compact", "--json"], { cwd: b })).stdout).toon_status).toBe("unchanged");
    expect((await runCli(["compact", "--check"], { cwd: b })).code).toBe(0);
    expect(readFileSync(join(b, TOON))).toEqual(before);
  }, 20_000);

  test("a 1 MB goal and a 1 MB now: both cut and named in the report; the projection stays small", async () => {
    const dir = await workspace(state({ goal: "g".repeat(1 << 20), now: "n".repeat(1 << 20) }));
    const r = await runCli(["compact", "--json"], { cwd: dir });
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as { tokens: { toon: number }; omitted: string[] };
    expect(report.omitted).toEqual(["goal (cut)", "now (cut)"]);
    expect(report.tokens.toon).toBeLessThanOrEqual(750);
  });

  // Was: src/state/projection.ts `cut()` slices goal/now at 600 UTF-16 code units, so an emoji
  // straddling the cut leaves a lone surrogate; @toon-format/toon refuses to encode it. `compact` and
  // `state show --toon` die with "unexpected error: TypeError … unpaired surrogate" and a stack trace,
  // and every prompt (chat, `prompt --dry-run`) silently loses the whole working state (section_error).
  // Fix: cut on a code-point boundary (drop a trailing high surrogate, or slice Array.from(text)).
  test("an emoji at the goal's 600-character cut crashes compact and drops the state from the prompt", async () => {
    const dir = await workspace();
    expect((await runCli(["state", "goal", `a${"👍".repeat(400)}`], { cwd: dir })).code).toBe(0);
    const compact = await runCli(["compact"], { cwd: dir });
    expect(compact.stderr).not.toMatch(STACK);
    expect(compact.code).toBe(0);
    const toon = await runCli(["state", "show", "--toon"], { cwd: dir });
    expect(toon.stderr).not.toContain("unexpected error");
    const dry = await runCli(["prompt", "--dry-run", "--json", "hi"], { cwd: dir });
    const manifest = JSON.parse(dry.stdout) as { items: { id: string }[]; dropped: { reason: string }[] };
    expect(manifest.dropped.filter((d) => d.reason === "section_error")).toEqual([]);
    expect(manifest.items.map((i) => i.id)).toContain("working_state");
  });

  // Was: goal and now are cut by characters (600 each), not tokens: 600 characters of Japanese are
  // ~450 o200k tokens, so a long Japanese goal and now (valid, written with `state goal/now`) exceed
  // the 750-token cap with nothing optional left. `compact` then refuses the state (exit 1, state.toon
  // not written, `--check` fails forever) and the prompt's state block goes over its cap anyway.
  // src/state/projection.ts projectState/cut. Fix: cut goal and now to a token share of the cap.
  test("a long Japanese goal and now: compact refuses a valid state instead of cutting it to the cap", async () => {
    const ja = "状態ストアを作り直して、複数のエージェントが同じ作業状態を安全に共有でき、クラッシュ後も復旧できるようにする。".repeat(12);
    const dir = await workspace(state({ goal: ja, now: ja }));
    const r = await runCli(["compact", "--json"], { cwd: dir });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).tokens.toon).toBeLessThanOrEqual(750);
  });

  test("--check: a done task or a new updated_at is no drift; a new 'now', another --max-tokens, a hand-edited state.toon are; it never writes", async () => {
    const dir = await workspace(state20x30());
    expect((await runCli(["compact"], { cwd: dir })).code).toBe(0);
    const check = async (...extra: string[]) => (await runCli(["compact", "--check", ...extra], { cwd: dir })).code;
    await runCli(["state", "task", "add", "already finished", "--status", "done"], { cwd: dir });
    expect(await check()).toBe(0);
    const toon = readFileSync(join(dir, TOON), "utf8");
    expect(await check("--max-tokens", "300")).toBe(1);
    writeFileSync(join(dir, TOON), `${toon} `);
    expect(await check()).toBe(1);
    await runCli(["state", "now", "something else"], { cwd: dir });
    expect(await check()).toBe(1);
    expect(readFileSync(join(dir, TOON), "utf8")).toBe(`${toon} `);
    expect((await runCli(["compact", "--max-tokens", "300"], { cwd: dir })).code).toBe(0);
    expect(await check("--max-tokens", "300")).toBe(0);
    expect(await check()).toBe(1);
  }, 20_000);

  // Was: src/state/state-toon-file.ts syncStateToon reads state.toon with readTextIfExists
  // (readFile: follows symlinks, blocks on a FIFO, no size cap). A FIFO there hangs `compact`,
  // `compact --check` and `init` forever; a symlink to /dev/zero (git can carry one) makes them eat
  // ~2 GB in 5 s and never end. Fix: lstat first; anything but a small regular file is "stale" (not read).
  test("a FIFO as state.toon hangs compact --check and init", async () => {
    const dir = await workspace();
    rmSync(join(dir, TOON));
    Bun.spawnSync(["mkfifo", join(dir, TOON)]);
    const check = await runWithin(["compact", "--check"], dir, 4_000);
    expect(check.code).not.toBe(-1);
    const init = await runWithin(["init"], dir, 4_000);
    expect(init.code).not.toBe(-1);
  }, 15_000);

  // Was: the same read: a directory as state.toon is "unexpected error: Error: EISDIR" with a stack trace.
  test("a directory as state.toon: an error naming it, no stack trace", async () => {
    const dir = await workspace();
    rmSync(join(dir, TOON));
    mkdirSync(join(dir, TOON));
    const r = await runCli(["compact", "--check"], { cwd: dir });
    expect(r.stderr).not.toMatch(STACK);
    expect(r.stderr).not.toContain("unexpected error");
    expect(r.stderr).toContain("state.toon");
  });

  // Was: docs/security.md: "A symbolic link in place of `.valarmind/` … is refused". `state goal`
  // refuses it, but `compact` writes state.toon through the link, outside the workspace:
  // syncStateToon → writeFileAtomic never goes through ensureValarmindDir (src/cli/actions/compact.ts).
  test("a .valarmind that is a symlink: state changes are refused, but compact writes state.toon where it points", async () => {
    const outside = await workspace(state({ goal: "outside" }));
    rmSync(join(outside, TOON));
    const root = await makeTempDir();
    mkdirSync(join(root, ".git"));
    symlinkSync(join(outside, ".valarmind"), join(root, ".valarmind"));
    const change = await runCli(["state", "goal", "x"], { cwd: root });
    expect(change.code).toBe(1);
    expect(change.stderr).toContain("is a symbolic link");
    const compact = await runCli(["compact"], { cwd: root });
    expect(existsSync(join(outside, TOON))).toBe(false);
    expect(compact.code).not.toBe(0);
  });

  // Was (message): src/state/store.ts FileStateStore.load wraps every read failure as
  // "cannot read …/state.json: ENOTDIR: not a directory, stat '…'" + "Check the file's permissions."
  // The problem is `.valarmind` itself being a file; permissions have nothing to do with it.
  test("a .valarmind that is a file: the read-only commands name it instead of blaming permissions", async () => {
    const dir = await makeTempDir();
    mkdirSync(join(dir, ".git"));
    writeFileSync(join(dir, ".valarmind"), "not a directory\n");
    for (const args of [["state", "show"], ["compact", "--check"], ["prompt", "--dry-run", "hi"]]) {
      const r = await runCli(args, { cwd: dir });
      expect({ args, code: r.code === 0 }).toEqual({ args, code: false });
      expect(r.stderr).not.toMatch(STACK);
      expect(r.stderr).not.toContain("ENOTDIR");
      expect(r.stderr).not.toContain("permissions");
    }
  });
});

describe("state commands", () => {
  test("twelve different changes at once all land (no lost update)", async () => {
    const dir = await workspace();
    const runs = [
      ...Array.from({ length: 5 }, (_, i) => ["state", "task", "add", `task ${i}`]),
      ...Array.from({ length: 5 }, (_, i) => ["state", "convention", "set", `c${i}`, "rule"]),
      ["state", "goal", "the goal"],
      ["state", "now", "right now"],
    ];
    const results = await Promise.all(runs.map((args) => runCli(args, { cwd: dir })));
    for (const r of results) expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    const s = JSON.parse(readFileSync(join(dir, STATE), "utf8")) as WorkingState;
    expect(s.tasks_open.map((t) => t.id).sort()).toEqual(["T-1", "T-2", "T-3", "T-4", "T-5"]);
    expect(Object.keys(s.conventions).sort()).toEqual(["c0", "c1", "c2", "c3", "c4"]);
    expect([s.goal, s.now]).toEqual(["the goal", "right now"]);
  }, 20_000);

  // Was: src/cli/actions/state-change.ts runStateChange prints `result.change` raw, and the ops
  // (src/state/ops.ts completeTask, clearBlocker, unsetConvention) quote titles, blocker texts and rules
  // that the model or a cloned repository wrote: `state task done 1` sends OSC 52 (clipboard write),
  // clear-screen, C1 CSI and bidi overrides to the terminal. `state show` cleans the same text.
  // Fix: terminalSafe() the change line (and the notices) before writing them.
  test("a change message repeats control sequences from state.json to the terminal", async () => {
    const dir = await workspace(
      state({
        tasks_open: [
          { id: "T-1", title: "evil\u001b]52;c;ZXZpbA==\u0007title\u001b[2J", status: "open", updated_at: TS },
          { id: "T-2", title: "two", status: "blocked", updated_at: TS },
        ],
        blockers: [{ id: "B-1", text: "blk\u001b[31mred\u202e", ts: TS, task: "T-2" }],
        conventions: { c: "rule\u009b1m" },
      }),
    );
    for (const args of [["state", "task", "done", "1"], ["state", "blocker", "clear", "1"], ["state", "convention", "unset", "c"]]) {
      const r = await runCli(args, { cwd: dir });
      expect(r.code).toBe(0);
      expect({ args, out: r.stdout }).not.toEqual({ args, out: expect.stringMatching(/[\u0007\u001b\u009b\u202e]/) });
    }
  });

  // Was: src/state/ops.ts nextNumber parses ids with Number(): past 2^53 every new id is the same
  // (T-9007199254740992), so a hand-edited big id makes `task add` hand out duplicate ids, and
  // `task done` can only ever reach the first. Fix: BigInt ids, or a schema cap on id digits.
  test("after a task id beyond 2^53, task add hands out the same id twice", async () => {
    const dir = await workspace(state({ tasks_open: [{ id: "T-9007199254740993", title: "big", status: "open", updated_at: TS }] }));
    await runCli(["state", "task", "add", "a"], { cwd: dir });
    await runCli(["state", "task", "add", "b"], { cwd: dir });
    const ids = (JSON.parse(readFileSync(join(dir, STATE), "utf8")) as WorkingState).tasks_open.map((t) => t.id);
    expect(new Set(ids).size).toBe(3);
  });
});

describe("prompt on a long, damaged session with manifests", () => {
  let root = "";
  let transcript = "";
  beforeAll(async () => {
    // state.json: a byte-order mark and a lone surrogate (read as U+FFFD with a notice, never rewritten).
    root = await workspace(`\ufeff${serializeState(state({ goal: "bad SURROGATE here" })).replace("SURROGATE", "\\ud800")}`);
    const paths = workspacePaths(root);
    const session = createSession(paths, { model: "gpt-5.5", cwd: root, id: "long0001", now: new Date("2026-01-31T12:00:00Z") });
    session.append(await agentLikeRecords({ turns: 200, shortBufferTurns: 24, windowBlockTurns: 8, countTokens: await exactCounter() }));
    session.close();
    transcript = session.file;
    // Another valarmind wrote the header; CRLF endings; a cut line and garbage in the middle; a torn tail.
    const lines = readFileSync(transcript, "utf8").split("\n").filter((l) => l !== "");
    lines[0] = (lines[0] ?? "").replace(/"valarmind":"[^"]*"/, '"valarmind":"9.9.9"');
    lines[100] = (lines[100] ?? "").slice(0, 40);
    lines.splice(300, 0, "not json at all");
    writeFileSync(transcript, `${lines.join("\r\n")}\r\n{"v":1,"kind":"assist`);
    const a = (await buildRequest(await fullInput({ sessionId: "long0001", turn: 37 }))).manifest;
    const items = [...a.items];
    const core = items.findIndex((i) => i.id === "core_rules");
    const project = items.findIndex((i) => i.id === "project_instructions");
    [items[core], items[project]] = [items[project]!, items[core]!];
    await writeManifest(session.dir, a); // 1
    await writeManifest(session.dir, { ...a, step: 2, items }); // 2: two items swapped
    await writeManifest(session.dir, { ...a, step: 3, items: [...a.items.filter((i) => i.id !== "personal_preferences"), { ...a.items[0]!, id: "extra:item", hash: "0123456789abcdef" }] }); // 3
  });

  test("every read-only command leaves every file as it was (bytes, mode, mtime); the dry run reports the damage", async () => {
    const before = snapshot(root);
    const commands = [
      ["state", "show"], ["state", "show", "--json"], ["state", "show", "--toon"], ["state", "show", "--all"],
      ["compact", "--check"], ["compact", "--check", "--json"],
      ["prompt", "--dry-run", "next step"], ["prompt"], ["prompt", "--json", "x"], ["prompt", "--show-prompt", "x"],
      ["prompt", "--list"], ["prompt", "--list", "--json"], ["prompt", "--show", "1"], ["prompt", "--show", "-1", "--json"],
      ["prompt", "--diff", "1", "3"], ["prompt", "--diff", "1", "3", "--json"],
    ];
    const results = await Promise.all(commands.map((args) => runCli(args, { cwd: root })));
    commands.forEach((args, i) => {
      const r = results[i]!;
      expect({ args, stack: STACK.test(r.stderr), ok: r.code === 0 || (args[0] === "compact" && r.code === 1) }).toEqual({ args, stack: false, ok: true });
    });
    expect(snapshot(root)).toEqual(before);
    const dry = results[6]!.stdout;
    expect(dry).toContain("session long0001 · turn 201");
    expect(dry).toMatch(/lines 101, 301 are damaged and skipped/);
    expect(dry).toContain("last line is incomplete");
  }, 20_000);

  test("--json outputs are valid and stable: the dry-run manifest differs between two runs only in its timestamp", async () => {
    const [one, two] = await Promise.all([runCli(["prompt", "--json", "x"], { cwd: root }), runCli(["prompt", "--json", "x"], { cwd: root })]);
    const a = await validateManifest(JSON.parse(one.stdout), "run 1");
    const b = await validateManifest(JSON.parse(two.stdout), "run 2");
    expect({ ...a, timestamp: "" }).toEqual({ ...b, timestamp: "" });
    const list = JSON.parse((await runCli(["prompt", "--list", "--json"], { cwd: root })).stdout) as unknown[];
    expect(list).toHaveLength(3);
  });

  test("--diff names an added and a removed item, with the reason", async () => {
    const r = await runCli(["prompt", "--diff", "1", "3", "--json"], { cwd: root });
    const changes = (JSON.parse(r.stdout) as { changes: { id: string; change: string }[] }).changes;
    expect(changes.map((c) => [c.id, c.change])).toEqual([["extra:item", "added"], ["personal_preferences", "removed"]]);
  });

  // Was: src/prompt/manifest-diff.ts diffManifests compares items by id only, so two items that
  // swapped places are "no item changed" while the unchanged prefix falls from ~100% to ~2%: the
  // report hides the very thing that broke the cache. Fix: report moved items (or the first item
  // where B stops matching A, as the manifest's `prefix.first_changed` does).
  test("--diff says 'no item changed' when two items swapped places and the cacheable prefix collapsed", async () => {
    const r = await runCli(["prompt", "--diff", "1", "2"], { cwd: root });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/unchanged prefix of B: [\d,]+ content tokens \([0-9.]+%\)/);
    expect(r.stdout).not.toContain("no item changed");
    expect(r.stdout).toContain("core_rules");
  });

  // Was: src/cli/manifest-reports/run-prompt.ts runPrompt refuses a message and `--tokens api` with
  // --list/--show/--diff, but silently ignores the other dry-run-only options: `--dry-run --list`
  // lists, `--show-prompt --show 1` shows the manifest, `--budget`/`--no-context-files` do nothing.
  test("dry-run-only options with --list/--show/--diff are usage errors naming the option", async () => {
    for (const args of [["--dry-run", "--list"], ["--show-prompt", "--show", "1"], ["--budget", "5000", "--diff", "1", "2"], ["--no-context-files", "--list"]]) {
      const r = await runCli(["prompt", ...args], { cwd: root });
      expect({ args, code: r.code }).toEqual({ args, code: 2 });
      expect(r.stderr).toContain(args[0]!);
    }
  });
});
