/**
 * Hostile per-session files (a cloned repository can ship any of them): manifests, transcripts and
 * custom command files that are huge, not JSON, FIFOs, links out of the workspace, oddly named or
 * lying about their session. What must hold, through the real CLI: a clear message naming the file,
 * no stack trace, no hang (every child is killed after a deadline), read-only commands write
 * nothing, output stays bounded, and nothing outside the workspace is read into the output or
 * written. Bugs found here and fixed carry a "Once a bug, fixed" comment (the last two: memory of
 * `sessions list` on a 100 MB transcript, a header naming another id).
 */
import { afterAll, afterEach, beforeEach, describe, expect, test } from "bun:test";
import { lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanupTempDirs, makeTempDir, spawnCli } from "../support/cli.ts";
import { lastUserText, startFakeResponsesServer, textStream, type FakeResponsesServer } from "../support/fake-responses-server.ts";
import { makeGitWorkspace } from "../agent/support/agent-harness.ts";
import { chat, chatEnv } from "../agent/support/cli-chat.ts";
import { watchPeakMemory } from "../support/peak-memory.ts";
import { workspacePaths } from "../../src/config/paths.ts";
import { listSessions } from "../../src/session/transcript.ts";

let server: FakeResponsesServer;
let root: string;
beforeEach(async () => {
  server = startFakeResponsesServer();
  server.setResponder((body) => textStream(`echo: ${lastUserText(body)}`));
  root = await makeGitWorkspace({ "README.md": "# demo\n" });
});
afterEach(async () => {
  await server.close();
});
afterAll(cleanupTempDirs);

interface Run {
  code: number;
  stdout: string;
  stderr: string;
  /** The child was still running at the deadline and was killed (a hang). */
  timedOut: boolean;
  /** Peak resident memory of the child, bytes (0 if unknown). */
  peakMemory: number;
  ms: number;
}

/** The real CLI, SIGKILLed after `deadlineMs` so a hang is a failed assertion, never a stuck suite. */
async function run(args: readonly string[], options: { deadlineMs?: number; env?: Record<string, string | undefined> } = {}): Promise<Run> {
  const started = performance.now();
  const child = spawnCli(args, { cwd: root, env: { ...chatEnv({ server }), ...options.env } });
  const peak = watchPeakMemory(child.pid);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill("SIGKILL");
  }, options.deadlineMs ?? 8000);
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  clearTimeout(timer);
  return { code, stdout, stderr, timedOut, peakMemory: peak.stop(), ms: performance.now() - started };
}

function expectClean(r: Run): void {
  expect(r.timedOut).toBe(false);
  expect(r.stderr).not.toMatch(/^\s+at /m);
  expect(r.stderr).not.toContain("TypeError");
  expect(r.stderr).not.toContain("RangeError");
}

/** Every path under `dir` with its type, size and mtime (lstat: links and FIFOs are not followed). */
function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const path = join(d, name);
      const s = lstatSync(path);
      const kind = s.isSymbolicLink() ? `link:${readlinkSync(path)}` : s.isFIFO() ? "fifo" : s.isDirectory() ? "dir" : "file";
      out[path] = `${kind} ${s.size} ${s.mtimeMs}`;
      if (s.isDirectory()) walk(path);
    }
  };
  walk(dir);
  return out;
}

/** Two headless turns: a session with a transcript and two manifests. */
async function twoTurns(): Promise<{ id: string; file: string; manifests: string }> {
  expect((await chat(["-p", "one"], { cwd: root, server })).code).toBe(0);
  expect((await chat(["--continue", "-p", "two"], { cwd: root, server })).code).toBe(0);
  const ref = listSessions(workspacePaths(root))[0];
  if (!ref) throw new Error("no session");
  return { id: ref.id, file: ref.file, manifests: join(ref.dir, "manifests") };
}

function mkfifo(path: string): void {
  const r = Bun.spawnSync(["mkfifo", path]);
  if (r.exitCode !== 0) throw new Error(`mkfifo ${path}: ${r.stderr.toString()}`);
}

const HEADER = (id: string, stamp = "2026-01-01T00:00:00.000Z") =>
  `${JSON.stringify({ v: 1, kind: "session", ts: stamp, id, started_at: stamp, cwd: "/elsewhere", model: "m", valarmind: "0.1.0" })}\n`;
const userLine = (turn: number, text: string) => `${JSON.stringify({ v: 1, ts: "2026-01-01T00:00:01.000Z", kind: "user", turn, text })}\n`;

/** A secret-looking file outside every workspace, for links to point at. */
async function outsideFile(content: string): Promise<string> {
  const dir = await makeTempDir("valarmind-outside-");
  const file = join(dir, "secret.txt");
  writeFileSync(file, content);
  return file;
}

const SECRET = "TOP-SECRET-OUTSIDE-THE-WORKSPACE";

describe("hostile manifests: prompt --list / --show / --diff, sessions show / prune", () => {
  test("not JSON, wrong shape, 50 MB, oddly named, a name with '..': listed as damaged by name, others still shown; nothing written; bounded", async () => {
    const s = await twoTurns();
    writeFileSync(join(s.manifests, "0003-01.json"), "{ not json");
    writeFileSync(join(s.manifests, "0004-01.json"), JSON.stringify({ manifest_version: "x", turn: "four" }));
    writeFileSync(join(s.manifests, "0005-01.json"), `{"pad":"${"a".repeat(50 * 1024 * 1024)}"}`);
    // Names that are not NNNN-NN.json are not manifests: ignored, never read.
    writeFileSync(join(s.manifests, "evil.json"), "{");
    writeFileSync(join(s.manifests, "12-1.json"), "{");
    writeFileSync(join(s.manifests, "0006-01-..%2F..%2Fx.json"), "{");
    mkdirSync(join(s.manifests, "0007-01.json"));
    const before = tree(join(root, ".valarmind"));

    const list = await run(["prompt", "--list"]);
    expectClean(list);
    expect(list.code).toBe(0);
    expect(list.stdout).toContain("0001-01.json");
    expect(list.stdout).toContain("0002-01.json");
    for (const name of ["0003-01.json", "0004-01.json", "0005-01.json", "0007-01.json"]) {
      expect(list.stderr).toContain(`skipped a damaged manifest: ${join(s.manifests, name)}`);
    }
    expect(list.stderr).toContain("0006-01-..%2F..%2Fx.json");
    expect(list.stdout + list.stderr).not.toContain("evil.json");
    expect(list.stdout + list.stderr).not.toContain("12-1.json");
    // The 50 MB file is named, not echoed.
    expect(list.stdout.length + list.stderr.length).toBeLessThan(20_000);
    expect(list.peakMemory).toBeGreaterThan(0);
    expect(list.peakMemory).toBeLessThan(1024 * 1024 * 1024);

    const shown = await run(["prompt", "--show", "5"]);
    expectClean(shown);
    expect(shown.code).toBe(1);
    expect(shown.stderr).toContain("manifest 5 is damaged");
    expect(shown.stderr).toContain("0005-01.json");
    expect(shown.stderr).toContain("delete the file or restore it");
    expect(shown.stderr.length).toBeLessThan(2_000);

    const wrongShape = await run(["prompt", "--show", "4"]);
    expect(wrongShape.code).toBe(1);
    expect(wrongShape.stderr).toContain("invalid manifest");

    const diff = await run(["prompt", "--diff", "1", "3"]);
    expectClean(diff);
    expect(diff.code).toBe(1);
    expect(diff.stderr).toContain("manifest 3 is damaged");
    const good = await run(["prompt", "--diff", "1", "2"]);
    expect(good.code).toBe(0);

    const show = await run(["sessions", "show", s.id]);
    expectClean(show);
    expect(show.code).toBe(0);
    const prune = await run(["sessions", "prune", "--older-than", "0"]);
    expectClean(prune);
    expect(prune.code).toBe(0);
    expect(prune.stdout).toContain("Nothing was removed");

    expect(tree(join(root, ".valarmind"))).toEqual(before);
  }, 30_000);

  test("10,000 manifest files, half damaged: --list and --diff finish quickly; one notice per damaged file, each named", async () => {
    const s = await twoTurns();
    const good = readFileSync(join(s.manifests, "0001-01.json"), "utf8");
    for (let i = 3; i < 10_003; i++) {
      const name = `${String(i % 10_000).padStart(4, "0")}-${String(Math.floor(i / 10_000) + 2).padStart(2, "0")}.json`;
      writeFileSync(join(s.manifests, name), i % 2 === 1 ? good : "{bad");
    }
    const before = tree(join(root, ".valarmind"));
    const list = await run(["prompt", "--list"], { deadlineMs: 15_000 });
    expectClean(list);
    expect(list.code).toBe(0);
    expect(list.ms).toBeLessThan(10_000);
    // Output grows with the directory, no faster: one row per file, one stderr line per damaged one.
    expect(list.stderr.trim().split("\n")).toHaveLength(5_000);
    expect(list.stdout.split("\n").length).toBeLessThan(10_002 + 20);
    const diff = await run(["prompt", "--diff", "2", "10002"], { deadlineMs: 15_000 });
    expectClean(diff);
    expect(diff.stderr).toBe("");
    expect(diff.code).toBe(0);
    expect(tree(join(root, ".valarmind"))).toEqual(before);
  }, 40_000);

  test("a manifest that links to /etc/passwd is reported damaged without quoting the target's contents", async () => {
    const s = await twoTurns();
    symlinkSync("/etc/passwd", join(s.manifests, "0003-01.json"));
    const list = await run(["prompt", "--list"]);
    expectClean(list);
    expect(list.code).toBe(0);
    expect(list.stderr).toContain(`skipped a damaged manifest: ${join(s.manifests, "0003-01.json")}`);
    const shown = await run(["prompt", "--show", "3"]);
    expect(shown.code).toBe(1);
    expect(shown.stderr).toContain("manifest 3 is damaged");
  }, 20_000);

  // Once a bug, fixed (src/prompt/manifest.ts:69, readManifest): `readFile(path)` follows a symbolic link, so a
  // manifest linked to any file outside the workspace is read; for a non-JSON target the parse error
  // quotes its first token (`JSON Parse error: Unexpected identifier "root"` for /etc/passwd), and a
  // target that is a valid manifest is shown by --show/--diff as if it were this session's.
  // Fix: lstat (or realpath-confine to the session's manifests directory) and refuse links with a
  // problem like "a link, not a manifest valarmind wrote"; never quote file contents in the problem.
  test("a manifest linked outside the workspace is refused as a link, never read (no content quoted, not shown)", async () => {
    const s = await twoTurns();
    const secret = await outsideFile(`${SECRET}\n`);
    symlinkSync(secret, join(s.manifests, "0003-01.json"));
    const outsideManifest = join(secret, "..", "m.json");
    writeFileSync(outsideManifest, readFileSync(join(s.manifests, "0001-01.json"), "utf8").replace('"turn": 1', '"turn": 77'));
    symlinkSync(outsideManifest, join(s.manifests, "0004-01.json"));
    const passwd = join(s.manifests, "0005-01.json");
    symlinkSync("/etc/passwd", passwd);
    const list = await run(["prompt", "--list"]);
    expect(list.stdout + list.stderr).not.toContain(SECRET.slice(0, 10));
    expect(list.stderr).not.toContain('"root"');
    expect(list.stderr).toContain("link");
    const shown = await run(["prompt", "--show", "4"]);
    expect(shown.code).toBe(1);
    expect(shown.stdout).not.toContain("turn 77");
  });

  // Once a bug, fixed (src/prompt/manifest.ts:69, readManifest via readManifestEntries:131): `readFile` of a FIFO
  // blocks until something writes to it, so `prompt --list` (and --show/--diff, which read every
  // manifest) hang forever on a FIFO named like a manifest. Fix: stat first (after refusing links)
  // and return a problem "not a regular file" for anything but a regular file, as
  // src/agent/custom-command-files.ts:71 does; also cap the size read (a manifest is a few KB).
  test("a FIFO named like a manifest: --list/--show/--diff say 'not a regular file' and finish", async () => {
    const s = await twoTurns();
    mkfifo(join(s.manifests, "0003-01.json"));
    for (const args of [["prompt", "--list"], ["prompt", "--show", "1"], ["prompt", "--diff", "1", "2"]]) {
      const r = await run(args, { deadlineMs: 5_000 });
      expect(r.timedOut).toBe(false);
      expect(r.code).toBe(0);
    }
  });

  test("a FIFO named like a manifest does not hang sessions show or sessions prune (they never open manifests)", async () => {
    const s = await twoTurns();
    mkfifo(join(s.manifests, "0003-01.json"));
    const before = tree(join(root, ".valarmind"));
    const show = await run(["sessions", "show", s.id], { deadlineMs: 5_000 });
    expectClean(show);
    expect(show.code).toBe(0);
    const prune = await run(["sessions", "prune", "--older-than", "0"], { deadlineMs: 5_000 });
    expectClean(prune);
    expect(prune.code).toBe(0);
    expect(tree(join(root, ".valarmind"))).toEqual(before);
  }, 20_000);

  test("an id like ../../x in --session, sessions show and --show selectors is refused as a usage error; nothing outside is read", async () => {
    await twoTurns();
    const before = tree(join(root, ".valarmind"));
    for (const args of [
      ["prompt", "--list", "--session", "../../x"],
      ["prompt", "--show", "../../x"],
      ["sessions", "show", "../../x"],
      ["sessions", "show", "/etc/passwd"],
    ]) {
      const r = await run(args);
      expectClean(r);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr).not.toContain("root:");
    }
    expect(tree(join(root, ".valarmind"))).toEqual(before);
  }, 20_000);
});

describe("hostile transcripts: sessions list/show, chat --continue, prompt --dry-run, undo", () => {
  test("a 100 MB transcript: sessions list finishes in bounded time with one line for it; nothing written", async () => {
    await twoTurns();
    const dir = workspacePaths(root).sessionsDir;
    const note = `${JSON.stringify({ v: 1, ts: "2026-01-01T00:00:01.000Z", kind: "note", what: "x", text: "a".repeat(900) })}\n`;
    writeFileSync(join(dir, "2000-01-01T00-00-00-bigbig01.jsonl"), HEADER("bigbig01") + note.repeat(110_000));
    const before = tree(join(root, ".valarmind"));
    const r = await run(["sessions", "list"], { deadlineMs: 20_000 });
    expectClean(r);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("bigbig01");
    expect(r.stdout.length).toBeLessThan(5_000);
    expect(tree(join(root, ".valarmind"))).toEqual(before);
  }, 40_000);

  // Once a bug, fixed (src/session/transcript.ts describeSession -> readSession): `sessions list`
  // read every transcript whole (readFileSync + split + JSON.parse of every line) only to count
  // turns and take the first message; a 107 MB transcript peaked at ~670 MB. Now
  // src/session/describe-session.ts scans it as bytes a chunk at a time and decodes only the
  // header and the user records. (This was a todo while the figure came from resourceUsage().maxRSS,
  // which counts the test runner's own ~400 MB in a full run: see test/support/peak-memory.ts.)
  test("a 100 MB transcript: sessions list stays under 150 MB of memory", async () => {
    await twoTurns();
    const dir = workspacePaths(root).sessionsDir;
    const note = `${JSON.stringify({ v: 1, ts: "2026-01-01T00:00:01.000Z", kind: "note", what: "x", text: "a".repeat(900) })}\n`;
    writeFileSync(join(dir, "2000-01-01T00-00-00-bigbig01.jsonl"), HEADER("bigbig01") + note.repeat(110_000));
    const r = await run(["sessions", "list"], { deadlineMs: 20_000 });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("bigbig01");
    console.info(`sessions list, 100 MB transcript: peak ${(r.peakMemory / 1048576).toFixed(0)} MB`);
    expect(r.peakMemory).toBeGreaterThan(10 * 1024 * 1024);
    expect(r.peakMemory).toBeLessThan(150 * 1024 * 1024);
  }, 60_000);

  test("a 50 MB line and 1e6 tiny records: sessions show/list finish; the long line is shown inert; output bounded for list", async () => {
    await twoTurns();
    const dir = workspacePaths(root).sessionsDir;
    writeFileSync(join(dir, "2000-01-01T00-00-00-longline.jsonl"), HEADER("longline") + userLine(1, "x".repeat(50 * 1024 * 1024)));
    writeFileSync(join(dir, "2000-01-01T00-00-01-tinyrecs.jsonl"), HEADER("tinyrecs") + "\n".repeat(1_000_000) + userLine(1, "after a million blank lines"));
    const before = tree(join(root, ".valarmind"));
    const list = await run(["sessions", "list"], { deadlineMs: 20_000 });
    expectClean(list);
    expect(list.code).toBe(0);
    expect(list.stdout).toContain("longline");
    expect(list.stdout).toContain("after a million blank lines");
    // The first message is cut to one short line.
    expect(list.stdout.length).toBeLessThan(5_000);
    const show = await run(["sessions", "show", "tinyrecs"], { deadlineMs: 20_000 });
    expectClean(show);
    expect(show.code).toBe(0);
    expect(show.stdout).toContain("after a million blank lines");
    expect(tree(join(root, ".valarmind"))).toEqual(before);
  }, 40_000);

  test("turn numbers like 1e15 or negative: the negative record is skipped as damaged and named; list/show/dry-run go on; read-only", async () => {
    await twoTurns();
    const dir = workspacePaths(root).sessionsDir;
    const file = join(dir, "2099-01-01T00-00-00-turnsodd.jsonl");
    writeFileSync(file, HEADER("turnsodd", "2099-01-01T00:00:00.000Z") + userLine(1e15, "huge turn") + userLine(-5, "negative turn") + userLine(1, "last"));
    const before = tree(join(root, ".valarmind"));
    const list = await run(["sessions", "list"]);
    expectClean(list);
    expect(list.code).toBe(0);
    const show = await run(["sessions", "show", "turnsodd"]);
    expectClean(show);
    expect(show.code).toBe(0);
    expect(show.stdout).toContain("line 3 is damaged and skipped");
    const dry = await run(["prompt", "--dry-run", "preview"]);
    expectClean(dry);
    expect(dry.code).toBe(0);
    expect(dry.stdout + dry.stderr).toContain("line 3 is damaged and skipped");
    expect(tree(join(root, ".valarmind"))).toEqual(before);
  }, 20_000);

  test("turn 1e15: chat --continue goes on (the message is recorded and answered) without a crash", async () => {
    await twoTurns();
    const dir = workspacePaths(root).sessionsDir;
    writeFileSync(join(dir, "2099-01-01T00-00-00-turnsbig.jsonl"), HEADER("turnsbig", "2099-01-01T00:00:00.000Z") + userLine(1e15, "huge turn"));
    const r = await chat(["--continue", "-p", "next"], { cwd: root, server });
    expect(r.stderr).not.toMatch(/^\s+at /m);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("echo: next\n");
  }, 20_000);

  // Once a bug, fixed (describeSession returned `header.id`): a transcript whose header claimed
  // another session's id was listed under that id, so `sessions list` showed the same id twice and
  // `sessions show <that id>` opened a different transcript than the row the user picked. Now the
  // listing uses the file's id (what findSession opens) and names the header that disagrees.
  test("a header claiming another session's id: listed under its file's id, with the mismatch named", async () => {
    const s = await twoTurns();
    const dir = workspacePaths(root).sessionsDir;
    writeFileSync(join(dir, "2099-01-01T00-00-00-liar0001.jsonl"), HEADER(s.id, "2099-01-01T00:00:00.000Z") + userLine(1, "impostor"));
    const list = await run(["sessions", "list", "--json"]);
    const ids = (JSON.parse(list.stdout) as Array<{ id: string }>).map((x) => x.id);
    expect(ids).toContain("liar0001");
    expect(ids.filter((id) => id === s.id)).toHaveLength(1);
    expect(list.stderr).toContain(`its header names session ${s.id}; listed under the file's id liar0001`);
    const text = await run(["sessions", "list"]);
    expect(text.stdout).toContain("liar0001");
    expect(text.stderr).toContain("liar0001");
  }, 20_000);

  test("a header claiming another session's id: nothing crashes; show by file id reads that file; the real session is unchanged", async () => {
    const s = await twoTurns();
    const dir = workspacePaths(root).sessionsDir;
    const realBytes = readFileSync(s.file, "utf8");
    writeFileSync(join(dir, "2099-01-01T00-00-00-liar0001.jsonl"), HEADER(s.id, "2099-01-01T00:00:00.000Z") + userLine(1, "impostor"));
    const list = await run(["sessions", "list"]);
    expectClean(list);
    expect(list.code).toBe(0);
    const show = await run(["sessions", "show", "liar0001"]);
    expectClean(show);
    expect(show.code).toBe(0);
    expect(show.stdout).toContain("impostor");
    const r = await chat(["--continue", "-p", "go on"], { cwd: root, server });
    expect(r.code).toBe(0);
    expect(readFileSync(s.file, "utf8")).toBe(realBytes);
  }, 20_000);

  test("a transcript linked to a file outside: not a session (sessions list names it as skipped, without its contents); chat --continue never writes the target", async () => {
    await twoTurns();
    const secret = await outsideFile(`${SECRET}\nroot:x:0:0\n`);
    const dir = workspacePaths(root).sessionsDir;
    const link = join(dir, "2099-01-01T00-00-00-linkout1.jsonl");
    symlinkSync(secret, link);
    const list = await run(["sessions", "list"]);
    expectClean(list);
    expect(list.code).toBe(0);
    expect(list.stderr).toContain("linkout1.jsonl: a symbolic link, not a transcript valarmind wrote");
    expect(list.stdout).not.toContain("linkout1");
    expect(list.stdout + list.stderr).not.toContain(SECRET);
    const show = await run(["sessions", "show", "linkout1"]);
    expectClean(show);
    expect(show.stdout + show.stderr).not.toContain(SECRET);
    const r = await chat(["--continue", "-p", "hello"], { cwd: root, server });
    expect(r.stderr).not.toMatch(/^\s+at /m);
    expect(r.code).toBe(0);
    expect(readFileSync(secret, "utf8")).toBe(`${SECRET}\nroot:x:0:0\n`);
  }, 20_000);

  // Once a bug, fixed (src/session/transcript.ts:283 openSession -> openSync(ref.file, "a") and
  // src/session/damaged-lines.ts:44 appendFileSync): a transcript that is a symbolic link is
  // followed, so when it points at a valid transcript outside the workspace (another checkout's
  // session, or any file the repository's author predicted) `chat --continue` appends this
  // conversation to that outside file, and `sessions show` prints its contents. Fix: in
  // listSessions/findSession lstat each transcript and skip (with a notice) anything that is not a
  // regular file inside sessionsDir; open with O_NOFOLLOW for appending.
  test("a transcript linked to a valid transcript outside: not listed/continued; the outside file is never written", async () => {
    await twoTurns();
    const outsideDir = await makeTempDir("valarmind-outside-");
    const target = join(outsideDir, "other.jsonl");
    const original = HEADER("linkout2", "2099-01-01T00:00:00.000Z") + userLine(1, SECRET);
    writeFileSync(target, original);
    symlinkSync(target, join(workspacePaths(root).sessionsDir, "2099-01-01T00-00-00-linkout2.jsonl"));
    const show = await run(["sessions", "show", "linkout2"]);
    expect(show.stdout).not.toContain(SECRET);
    const r = await chat(["--continue", "-p", "hello"], { cwd: root, server });
    expect(r.code).toBe(0);
    expect(readFileSync(target, "utf8")).toBe(original);
  });

  // Once a bug, fixed (src/session/transcript-read.ts:98 readSession -> readFileSync): a FIFO named like a
  // transcript blocks the reader forever: `sessions list` (describeSession on every transcript),
  // `sessions show`, `prompt --dry-run`, `chat --continue` and `undo` when it is the latest session
  // hang. `undo` takes the session lock first and then ignores SIGTERM while blocked (observed: it
  // had to be SIGKILLed, leaving `.valarmind/sessions/<id>.lock` behind). Fix: listSessions should
  // keep only regular files (lstat), and readSession should open with O_NONBLOCK / fstat and refuse
  // a non-regular file with "not a regular file; remove it".
  test("a FIFO named like a transcript: list/show/dry-run/--continue/undo finish (it is no session); sessions list names it", async () => {
    await twoTurns();
    mkfifo(join(workspacePaths(root).sessionsDir, "2099-01-01T00-00-00-fifo0001.jsonl"));
    for (const args of [["sessions", "list"], ["sessions", "show", "fifo0001"], ["prompt", "--dry-run", "x"], ["undo"], ["chat", "--continue", "-p", "x"]]) {
      const r = await run(args, { deadlineMs: 5_000 });
      expect(r.timedOut).toBe(false);
      expect(r.stderr).not.toMatch(/^\s+at /m);
      if (args[1] === "list") expect(r.stderr).toContain("fifo0001.jsonl: a FIFO, not a transcript valarmind wrote");
    }
  });
});

describe("hostile custom command files shipped in the clone", () => {
  const commandsDir = () => join(root, ".valarmind", "commands");
  const userConfig = async () => {
    const dir = await makeTempDir("valarmind-xdg-");
    return { XDG_CONFIG_HOME: dir };
  };
  const sentText = (): string => JSON.stringify(server.requests.at(-1)?.body.input ?? "");

  async function shipHostileCommands(): Promise<string> {
    const secret = await outsideFile(`${SECRET}\n`);
    const dir = commandsDir();
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "big.md"), "x".repeat(10 * 1024 * 1024));
    mkfifo(join(dir, "fifo.md"));
    symlinkSync(secret, join(dir, "out.md"));
    writeFileSync(join(dir, "a;rm -rf ~.md"), "Do $ARGUMENTS");
    writeFileSync(join(dir, "$(touch pwned).md"), "Do $ARGUMENTS");
    writeFileSync(join(dir, "back\\slash.md"), "Do $ARGUMENTS");
    writeFileSync(join(dir, "loop.md"), "A $ARGUMENTS B $ARGUMENTS C");
    writeFileSync(join(dir, "peek.md"), "Summarise @/etc/passwd and @../secret.txt and $ARGUMENTS");
    return secret;
  }

  test("untrusted: none is read (a FIFO and a 10 MB file do not hang or slow it); one notice counts them and says how to trust; /NAME is refused, nothing sent", async () => {
    await shipHostileCommands();
    const env = await userConfig();
    const r = await run(["chat", "-p", "/peek now"], { env, deadlineMs: 8_000 });
    expectClean(r);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("/peek is a project command (.valarmind/commands/peek.md) and this folder is not trusted");
    expect(r.stderr).toContain("valarmind trust");
    expect(server.requests).toHaveLength(0);
    // A plain message in the untrusted folder: sent as typed, the commands unread.
    const plain = await run(["chat", "-p", "hello"], { env, deadlineMs: 8_000 });
    expectClean(plain);
    expect(plain.code).toBe(0);
    expect(sentText()).not.toContain("Summarise");
    expect(sentText()).not.toContain(SECRET);
    expect(readdirSync(root)).not.toContain("pwned");
  }, 20_000);

  test("trusted (--trust): each hostile file is a notice naming it and what to do; the good ones stay bounded and confined", async () => {
    const secret = await shipHostileCommands();
    const env = await userConfig();
    const r = await run(["chat", "--trust", "-p", "/loop $ARGUMENTS$ARGUMENTS"], { env, deadlineMs: 10_000 });
    expectClean(r);
    expect(r.code).toBe(0);
    const notices = r.stderr;
    expect(notices).toContain(".valarmind/commands/big.md: 10240 KiB, over the 32 KiB a command file may hold; shorten it");
    expect(notices).toContain(".valarmind/commands/fifo.md: not a regular file");
    expect(notices).toContain(`.valarmind/commands/out.md: a link to ${secret}, outside the workspace`);
    expect(notices).toContain("'a;rm -rf ~' is not a command name");
    expect(notices).toContain("'$(touch pwned)' is not a command name");
    expect(notices).toContain("'back\\slash' is not a command name");
    expect(notices).not.toContain(SECRET);
    expect(notices.length).toBeLessThan(4_000);
    // $ARGUMENTS is substituted once, never re-expanded: the arguments' own "$ARGUMENTS" stay literal.
    const sent = server.requests.at(-1)?.body.input;
    expect(JSON.stringify(sent)).toContain("A $ARGUMENTS$ARGUMENTS B $ARGUMENTS$ARGUMENTS C");
    expect(JSON.stringify(sent).length).toBeLessThan(50_000);
    expect(readdirSync(root)).not.toContain("pwned");
  }, 20_000);

  test("trusted: a command whose text references @/etc/passwd and @../secret attaches neither; the request carries no outside content", async () => {
    const secret = await shipHostileCommands();
    const env = await userConfig();
    const r = await run(["chat", "--trust", "-p", "/peek please"], { env, deadlineMs: 10_000 });
    expectClean(r);
    expect(r.code).toBe(0);
    const sent = sentText();
    expect(sent).toContain("Summarise @/etc/passwd");
    expect(sent).not.toContain("root:x:0:0");
    expect(sent).not.toContain(SECRET);
    expect(readFileSync(secret, "utf8")).toBe(`${SECRET}\n`);
  }, 20_000);
});
