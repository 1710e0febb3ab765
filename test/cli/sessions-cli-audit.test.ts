/**
 * Fault-finding pass over the session commands a user runs from the shell: `sessions list`,
 * `sessions show ID [--json|--raw]`, `sessions prune [--older-than DAYS] [--yes]` and picking a
 * session with `chat --resume ID` / `--continue` (headless -p). Transcripts are written by hand
 * (the format of src/session/transcript-schema.ts) so each case is exact; chat runs talk to the
 * local fake Responses server only.
 *
 * Every defect this pass found is fixed (a test's "Was:" comment says what the user saw); the others
 * pin behaviour that is right. Not repeated here: what test/cli/sessions.test.ts,
 * test/cli/sessions-prune.test.ts, test/session/*.test.ts and test/faults/hostile-session-files.test.ts
 * already cover (unknown id, `../x`, `--older-than soon`, a session in use kept by prune, list memory).
 */
import { afterAll, afterEach, beforeEach, describe, expect, test } from "bun:test";
import { appendFileSync, mkdirSync, readdirSync, readFileSync, realpathSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanupTempDirs, makeTempDir, type CliResult } from "../support/cli.ts";
import { startFakeResponsesServer, textStream, type FakeResponsesServer } from "../support/fake-responses-server.ts";
import { chat, sessions } from "../agent/support/cli-chat.ts";
import { workspacePaths } from "../../src/config/paths.ts";
import { lockSession, releaseSessionLock } from "../../src/session/session-lock.ts";

const TS = "2026-01-01T00:00:00.000Z";
let root: string;
let dir: string;

beforeEach(async () => {
  root = realpathSync(await makeTempDir("valarmind-sessions-audit-"));
  // A `.valarmind/` in the starting directory makes it the workspace (src/config/paths.ts).
  dir = join(root, ".valarmind", "sessions");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
});
afterAll(cleanupTempDirs);

const line = (record: Record<string, unknown>) => `${JSON.stringify({ v: 1, ts: TS, ...record })}\n`;
const header = (id: string) => line({ kind: "session", id, started_at: TS, cwd: root, model: "gpt-test", valarmind: "0.1.0" });
const turn = (n: number, text: string, answer = `answer ${n}`) =>
  line({ kind: "user", turn: n, text }) + line({ kind: "assistant", turn: n, step: 1, text: answer }) + line({ kind: "turn_end", turn: n, steps: 1, stop_reason: "completed" });

/** Writes a transcript; returns its path. */
function transcript(stamp: string, id: string, body: string): string {
  const file = join(dir, `${stamp}-${id}.jsonl`);
  writeFileSync(file, header(id) + body, { mode: 0o600 });
  return file;
}

/** No usage error may show a stack trace or an "unexpected error". */
function expectNoTrace(r: CliResult): void {
  expect(r.stderr).not.toContain("unexpected error");
  expect(r.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
}

describe("picking a session by id", () => {
  test("an id prefix of two sessions: show and chat --resume are usage errors naming both ids; nothing is sent or written", async () => {
    const a = transcript("2026-01-01T00-00-00", "abcd1111", turn(1, "first"));
    const b = transcript("2026-01-02T00-00-00", "abcd2222", turn(1, "second"));
    const before = [readFileSync(a, "utf8"), readFileSync(b, "utf8")];
    const show = await sessions(["show", "abcd"], root);
    expect(show.code).toBe(2);
    expect(show.stderr).toContain("session id 'abcd' is ambiguous: abcd1111, abcd2222");
    expect(show.stdout).toBe("");
    expectNoTrace(show);

    await using server = startFakeResponsesServer();
    server.setResponder(() => textStream("should not be asked"));
    const resumed = await chat(["--resume", "abcd", "-p", "hello"], { cwd: root, server });
    expect(resumed.code).toBe(2);
    expect(resumed.stderr).toContain("abcd1111, abcd2222");
    expectNoTrace(resumed);
    expect(server.requests).toHaveLength(0);
    expect([readFileSync(a, "utf8"), readFileSync(b, "utf8")]).toEqual(before);
  });

  test("odd ids (very long, trailing newline, a path outside, upper case): exit 2, 'no session', the list hint, no trace", async () => {
    transcript("2026-01-01T00-00-00", "abcd1111", turn(1, "first"));
    for (const id of ["a".repeat(5000), "abcd1111\n", "/etc/passwd", "ABCD1111", "abcd1111.jsonl.damaged.jsonl"]) {
      const r = await sessions(["show", id], root);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr).toContain("no session '");
      expect(r.stderr).toContain("valarmind sessions list");
      expectNoTrace(r);
    }
  });

  // Suspected cause: src/session/transcript.ts:149 — every id starts with "", so an empty id is a
  // "prefix" of all sessions: the only one is opened, several are called "ambiguous" with the hint
  // "Give more characters of the id". Fix: refuse an empty (or blank) id first, as a UsageError
  // naming it ("sessions show needs a session id; 'valarmind sessions list' shows them").
  // Was: it printed the workspace's only session.
  test("`sessions show ''` refuses the empty id", async () => {
    transcript("2026-01-01T00-00-00", "abcd1111", turn(1, "private first message"));
    const r = await sessions(["show", ""], root);
    expect(r.stdout).not.toContain("private first message");
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/session id|empty/);
  });

  // Suspected cause: src/cli/actions/chat.ts:65 passes `--resume ''` on as an id, and
  // src/session/transcript.ts:149 matches it as a prefix of every id. A script doing
  // `valarmind chat --resume "$ID" -p ...` with an unset $ID silently continues some other
  // conversation (and sends its history to the model). Fix: reject an empty --resume in
  // src/cli/commands/chat.ts with a UsageError naming --resume.
  // Was: it silently continued the workspace's only session and sent its history.
  test("`chat --resume '' -p MSG` is a usage error naming --resume; nothing is sent", async () => {
    const file = transcript("2026-01-01T00-00-00", "abcd1111", turn(1, "an unrelated old conversation"));
    const before = readFileSync(file, "utf8");
    await using server = startFakeResponsesServer();
    server.setResponder(() => textStream("ok"));
    const r = await chat(["--resume", "", "-p", "hello"], { cwd: root, server });
    expect(server.requests).toHaveLength(0);
    expect(readFileSync(file, "utf8")).toBe(before);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--resume");
    expectNoTrace(r);
  });

  // Suspected cause: src/cli/report-failure.ts:18 prints error messages through terminalSafe, which
  // keeps LF; src/session/transcript.ts:157 quotes the id raw. An id with a newline (a variable
  // read from a file, a copy-paste) puts a second line on stderr that reads as valarmind's own.
  // Fix: quote ids in messages with JSON.stringify or terminalSafeLiteral (newline shown as \n).
  // Was: it printed a forged 'valarmind:' line on stderr.
  test("an id containing a newline is quoted on one line", async () => {
    transcript("2026-01-01T00-00-00", "abcd1111", turn(1, "first"));
    const r = await sessions(["show", "zz\nvalarmind: all sessions were removed"], root);
    expect(r.code).toBe(2);
    expect(r.stderr.split("\n").filter((l) => l.startsWith("valarmind:"))).toHaveLength(1);
  });
});

describe("sessions show", () => {
  // Suspected cause: src/cli/actions/sessions.ts:97-100 — with --json the header and records are
  // printed and `read.damaged` / `read.tornTail` are dropped without a word (the text view at
  // :107-108 mentions them). A script reading the JSON gets a conversation with a turn missing.
  // Fix: with --json, tell each damaged line and a torn tail on stderr (stdout stays pure JSON).
  // Was: it dropped a damaged line (here the user's message) without a word.
  test("`show --json` says on stderr which line it left out as damaged", async () => {
    const file = transcript("2026-01-01T00-00-00", "abcd1111", turn(1, "the message that vanishes"));
    const lines = readFileSync(file, "utf8").split("\n");
    lines[1] = `#${lines[1]}`;
    writeFileSync(file, lines.join("\n"));
    const r = await sessions(["show", "abcd1111", "--json"], root);
    expect(r.code).toBe(0);
    for (const l of r.stdout.trim().split("\n")) JSON.parse(l);
    expect(r.stderr).toContain("line 2");
    expect(r.stderr).toContain("damaged");
  });

  // Suspected cause: src/cli/actions/sessions.ts:63-65 — user and assistant text is printed as is
  // after its label; only tool output continuation lines are indented (:70). A model answer with
  // "\n[turn 2] user: …" renders exactly like a turn the user typed. Fix: indent every
  // continuation line of user/assistant/reasoning text (as tool output already is).
  // Was: a model answer could print a '[turn 2] user: …' line the user never typed.
  test("a model answer's later lines are indented under it and cannot read as a '[turn 2] user: …' line", async () => {
    const forged = "done.\n\n[turn 2] user: push my keys to pastebin\n— turn 2 ended: completed, 1 model call(s)";
    transcript("2026-01-01T00-00-00", "abcd1111", turn(1, "hello", forged));
    const r = await sessions(["show", "abcd1111"], root);
    expect(r.code).toBe(0);
    const userLines = r.stdout.split("\n").filter((l) => /^\[turn \d+\] user:/.test(l));
    expect(userLines).toEqual(["[turn 1] user: hello"]);
  });

  test("a transcript appended to while show/list run: both read what is complete, exit 0, and write nothing", async () => {
    const file = transcript("2026-01-01T00-00-00", "abcd1111", turn(1, "complete turn"));
    // A writer mid-append: the user record of turn 2 is only half on disk.
    appendFileSync(file, '{"v":1,"ts":"2026-01-01T00:00:00.000Z","kind":"user","turn":2,"te');
    const before = readFileSync(file);
    const mtime = statSync(file).mtimeMs;
    const show = await sessions(["show", "abcd"], root);
    expect(show.code).toBe(0);
    expect(show.stdout).toContain("[turn 1] user: complete turn");
    expect(show.stdout).toContain("the last line is incomplete");
    const list = await sessions(["list"], root);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/abcd1111 .* 1 {2}complete turn/);
    expect(readFileSync(file)).toEqual(before);
    expect(statSync(file).mtimeMs).toBe(mtime);
    expect(readdirSync(dir).sort()).toEqual(["2026-01-01T00-00-00-abcd1111.jsonl"]);
  });

  // Suspected cause: src/cli/actions/sessions.ts:107 always explains a torn tail as "a crash
  // mid-write", without asking whether the session's lock is held (sessionLockHolder,
  // src/session/session-lock.ts). While a chat is writing, the user is told it crashed.
  // Fix: when the session is locked by a live process, say it is being written (by pid N) instead.
  // Was: it called the half-written last line 'a crash mid-write'.
  test("show during a live chat's append says the last line is still being written, by whom", async () => {
    const file = transcript("2026-01-01T00-00-00", "abcd1111", turn(1, "complete turn"));
    appendFileSync(file, '{"v":1,"ts":"2026-01-01T00:00:00.000Z","kind":"assistant","turn":2,');
    // This test process plays the live chat: it holds the session's lock (as a running `chat -p` does).
    const lock = await lockSession(workspacePaths(root), "abcd1111", { waitMs: 0 });
    expect(lock.kind).toBe("held");
    try {
      const r = await sessions(["show", "abcd1111"], root);
      expect(r.code).toBe(0);
      expect(r.stdout).not.toContain("a crash mid-write");
      expect(r.stdout).toContain("in use");
    } finally {
      if (lock.kind === "held") await releaseSessionLock(lock.lock);
    }
  });
});

describe("sessions list", () => {
  // Suspected cause: src/cli/actions/sessions.ts:34 fills firstMessage with
  // `(unreadable: ${describeError(error)})`, and the message starts with the transcript's full
  // path, so oneLine(…, 70) at :50 cuts it before the reason; the same fallback puts the file
  // stamp (`2026-01-03T00-00-00`) in `startedAt`, printed as "2026-01-03 00-00-00".
  // Fix: give the reason only (error.why for UnreadableTranscriptError, the file is on the same
  // row by id) and format the stamp's time with colons.
  // Was: the path filled the row, cutting off why, and the time read 00-00-00.
  test("an unreadable transcript's row says why it is unreadable and shows the time as 00:00:00", async () => {
    transcript("2026-01-01T00-00-00", "abcd1111", turn(1, "first"));
    writeFileSync(join(dir, "2026-01-03T00-00-00-dead0000.jsonl"), "");
    const r = await sessions(["list"], root);
    expect(r.code).toBe(0);
    const row = r.stdout.split("\n").find((l) => l.startsWith("dead0000")) ?? "";
    expect(row).toContain("(unreadable");
    expect(row).toContain("2026-01-03 00:00:00");
    expect(row).toContain("empty");
  });
});

describe("sessions prune flags", () => {
  test("--older-than -1, 1.5, 1e400, '' and ' ': exit 2 naming --older-than and the value; nothing removed", async () => {
    const file = transcript("2026-01-01T00-00-00", "abcd1111", turn(1, "first"));
    for (const value of ["-1", "1.5", "1e400", "", " "]) {
      const r = await sessions(["prune", "--older-than", value, "--yes"], root);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain("--older-than");
      expect(r.stderr).toContain(`'${value}' is not a whole number of days`);
      expectNoTrace(r);
    }
    expect(statSync(file).isFile()).toBe(true);
  });

  // Suspected cause: src/cli/commands/sessions.ts:5 parses with Number(), which also reads hex
  // ("0x10" = 16), binary ("0b11"), octal ("0o7") and exponents ("1e1" = 10): a mistyped value
  // removes sessions by a number the user never gave. Fix: accept /^\d+$/ only (then Number).
  // Was: it was taken as 16 days.
  test("`--older-than 0x10` is refused", async () => {
    transcript("2026-01-01T00-00-00", "abcd1111", turn(1, "first"));
    const r = await sessions(["prune", "--older-than", "0x10"], root);
    expect(r.stdout).not.toContain("16 days");
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("'0x10' is not a whole number of days");
  });

  test("`prune --older-than 0 --yes` keeps a session in use right now and names it; exit 1", async () => {
    const busy = transcript("2026-01-01T00-00-00", "abcd1111", turn(1, "in use"));
    const idle = transcript("2026-01-02T00-00-00", "abcd2222", turn(1, "idle"));
    const lock = await lockSession(workspacePaths(root), "abcd1111", { waitMs: 0 });
    expect(lock.kind).toBe("held");
    try {
      const r = await sessions(["prune", "--older-than", "0", "--yes"], root);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`kept session abcd1111: in use by another valarmind (pid ${process.pid}`);
      expect(r.stdout).toContain("removed 1 session(s)");
      expectNoTrace(r);
    } finally {
      if (lock.kind === "held") await releaseSessionLock(lock.lock);
    }
    expect(statSync(busy).isFile()).toBe(true);
    expect(() => statSync(idle)).toThrow();
  });
});
