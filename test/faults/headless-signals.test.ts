/**
 * Headless runs (`valarmind chat -p`) hit from outside: a signal mid-answer or while a shell
 * command runs, the reader of stdout going away, two `--continue` started at once on one session,
 * a second signal during the shutdown of the first, and `-p -` on a pipe that never closes.
 *
 * What must hold (docs/agent.md "Headless" and "Sessions", README's exit codes): the documented
 * exit code (130 SIGINT, 143 SIGTERM, 129 SIGHUP; 0 when the reader of stdout stops early), no
 * stack trace, nothing left running (a `run_shell` command's whole process group ends with the
 * turn), every transcript line whole and valid with each turn closed, the user's message kept, and
 * the session lock released, so the next `--continue` neither waits nor forks.
 *
 * Pauses are gates in the fake server and events read from the child; the only timers are polls of
 * /proc for a shell command's `sleep` (named by a unique duration) and one bounded wait asserting
 * that `-p -` does NOT give up on a silent pipe. Every process started here is killed afterwards.
 *
 * Cases under a "Once a bug" comment found real bugs, since fixed; the comment says what happened.
 */
import { afterAll, afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { BUN_FLAGS, CLI_ENTRY, cleanupTempDirs, makeTempDir } from "../support/cli.ts";
import {
  createGate,
  gatedAfter,
  lastUserText,
  startFakeResponsesServer,
  textStream,
  toolCallStream,
  type FakeResponsesServer,
  type Gate,
} from "../support/fake-responses-server.ts";
import { makeGitWorkspace } from "../agent/support/agent-harness.ts";
import { chat, chatEnv, latestRecords, spawnChat } from "../agent/support/cli-chat.ts";
import { listSessions, readSession } from "../../src/session/transcript.ts";
import { checkRecord } from "../../src/session/transcript-read.ts";
import { workspacePaths } from "../../src/config/paths.ts";
import type { TranscriptRecord } from "../../src/session/transcript-schema.ts";
import { allUserMessages } from "./support/transcripts.ts";

const SIGNALS = [
  ["SIGINT", 130],
  ["SIGTERM", 143],
  ["SIGHUP", 129],
] as const;
type EndingSignal = (typeof SIGNALS)[number][0];

const ANSWER = "partial words then more";

let server: FakeResponsesServer;
let root: string;
/** Processes started by the test now running; killed (by pid) if a test left any. */
interface Tracked {
  readonly pid: number;
  readonly exitCode: number | null;
  readonly signalCode: NodeJS.Signals | number | null;
  kill(signal?: number | NodeJS.Signals): void;
}
const started = new Set<Tracked>();
/** Unique `sleep` durations the shell commands of this file run; any left alive is killed. */
const sleepMarkers: string[] = [];
/** Gates to release at the end, so the fake server's paused streams end too. */
const gates: Gate[] = [];

beforeEach(async () => {
  server = startFakeResponsesServer();
  server.setResponder((body) => textStream(`echo: ${lastUserText(body)}`));
  root = await makeGitWorkspace({ "README.md": "# demo\n" });
});

afterEach(async () => {
  for (const gate of gates.splice(0)) gate.release();
  for (const child of started) {
    if (child.exitCode === null && child.signalCode === null) {
      try {
        // Pipelines are spawned detached (their own group): end the whole group.
        process.kill(-child.pid, "SIGKILL");
      } catch {
        child.kill("SIGKILL");
      }
    }
  }
  started.clear();
  for (const pid of sleepPids(sleepMarkers.splice(0))) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone meanwhile
    }
  }
  await server.close();
});
afterAll(cleanupTempDirs);

function track<T extends Tracked>(child: T): T {
  started.add(child);
  return child;
}

function gated(afterEvents = 6): Gate {
  const { response, gate } = gatedAfter(textStream(ANSWER), afterEvents);
  server.enqueue(response);
  gates.push(gate);
  return gate;
}

/** A stream's text, read as it arrives (`text` so far) and whole (`done`). */
function collect(stream: ReadableStream<Uint8Array>): { readonly text: string; done: Promise<string> } {
  let text = "";
  const decoder = new TextDecoder();
  const done = (async () => {
    for await (const chunk of stream) text += decoder.decode(chunk, { stream: true });
    return text;
  })();
  return {
    get text() {
      return text;
    },
    done,
  };
}

async function finish(child: { exited: Promise<number> }, out: { done: Promise<string> }, err: { done: Promise<string> }) {
  const [code, stdout, stderr] = await Promise.all([child.exited, out.done, err.done]);
  return { code, stdout, stderr };
}

/** Polls `condition` (for what only /proc or a growing stream can tell) until it holds, else throws naming `what`. */
async function waitFor(condition: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await Bun.sleep(20);
  }
}

/** Live (not zombie) processes running `sleep MARKER` for one of the markers, wherever they are (sandbox included). */
function sleepPids(markers: readonly string[]): number[] {
  if (markers.length === 0) return [];
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
      if (!(argv[0] ?? "").endsWith("sleep") || !markers.includes(argv[1] ?? "")) continue;
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      if (stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z")) continue;
      pids.push(Number(entry));
    } catch {
      // the process ended while we looked
    }
  }
  return pids;
}

/** A `sleep` duration no other process on the machine runs. */
function sleepMarker(): string {
  const marker = `30.${String(Math.floor(Math.random() * 1e6)).padStart(6, "0")}1`;
  sleepMarkers.push(marker);
  return marker;
}

function expectNoStackTrace(stderr: string): void {
  expect(stderr).not.toMatch(/^\s+at\s/m);
  expect(stderr).not.toMatch(/\bEPIPE\b|Unhandled|uncaught|TypeError|ReferenceError/i);
}

/** `.lock` entries under .valarmind/sessions/ (the session locks, ADR 0072). */
function sessionLocks(): string[] {
  const dir = workspacePaths(root).sessionsDir;
  return existsSync(dir) ? readdirSync(dir).filter((name) => name.endsWith(".lock")) : [];
}

/**
 * Every transcript of the workspace as written: each line whole (the file ends with a newline),
 * valid JSON and a valid record, the header first; turns one after another (a `user` opens turn
 * N+1 only after turn N's `turn_end`; records of the open turn carry its number), every turn
 * closed; and the reader sees no damage, torn line or renumbering.
 */
function expectWholeTranscripts(): void {
  const refs = listSessions(workspacePaths(root));
  expect(refs.length).toBeGreaterThan(0);
  for (const ref of refs) {
    const raw = readFileSync(ref.file, "utf8");
    expect({ file: ref.file, endsWithNewline: raw.endsWith("\n") }).toEqual({ file: ref.file, endsWithNewline: true });
    const records = raw
      .slice(0, -1)
      .split("\n")
      .map((line, i) => {
        const value: unknown = JSON.parse(line);
        if (!checkRecord.Check(value)) throw new Error(`${ref.file} line ${i + 1} is not a valid record: ${line}`);
        return value as TranscriptRecord;
      });
    expect(records[0]?.kind).toBe("session");
    let open: number | undefined;
    let last = 0;
    for (const record of records.slice(1)) {
      const turn = "turn" in record && typeof record.turn === "number" ? record.turn : undefined;
      if (record.kind === "user") {
        expect({ file: ref.file, openTurn: open, user: turn }).toEqual({ file: ref.file, openTurn: undefined, user: last + 1 });
        open = last = record.turn;
      } else if (open !== undefined && turn !== undefined) {
        expect({ file: ref.file, kind: record.kind, turn }).toEqual({ file: ref.file, kind: record.kind, turn: open });
      }
      if (record.kind === "turn_end") open = undefined;
    }
    expect({ file: ref.file, unclosedTurn: open }).toEqual({ file: ref.file, unclosedTurn: undefined });
    const read = readSession(ref.file);
    expect(read.damaged).toEqual([]);
    expect(read.tornTail).toBeUndefined();
    expect(read.renumbered).toEqual([]);
  }
}

function turnRecords(turn: number): TranscriptRecord[] {
  return latestRecords(root).filter((r) => "turn" in r && r.turn === turn);
}

/**
 * The next `chat --continue -p` goes straight on in the same session: no wait for a lock, no fork,
 * and (unless `recovering`) no unfinished turn to close.
 */
async function expectNextContinueUnblocked(message: string, options: { sessions?: number; recovering?: boolean } = {}) {
  const next = await chat(["--continue", "-p", message], { cwd: root, server });
  expectNoStackTrace(next.stderr);
  expect({ code: next.code, stderr: next.stderr }).toMatchObject({ code: 0 });
  expect(next.stdout).toBe(`echo: ${message}\n`);
  expect(next.stderr).not.toContain("in use by another valarmind");
  expect(next.stderr).not.toContain("new session");
  if (!options.recovering) expect(next.stderr).not.toContain("never finished");
  expect(listSessions(workspacePaths(root))).toHaveLength(options.sessions ?? 1);
  expect(latestRecords(root).filter((r) => r.kind === "user").at(-1)).toMatchObject({ text: message });
  return next;
}

async function firstTurn(): Promise<void> {
  const first = await chat(["-p", "start"], { cwd: root, server });
  if (first.code !== 0) throw new Error(`first turn failed: ${first.stderr}`);
}

/** The environment spawnCli gives a child, for children spawned by hand (a pipeline, a raw stdin). */
async function handEnv(extra: Record<string, string> = {}): Promise<Record<string, string>> {
  const merged: Record<string, string | undefined> = {
    ...process.env,
    NO_COLOR: "1",
    XDG_CONFIG_HOME: await makeTempDir("valarmind-config-"),
    ...chatEnv({ server }),
    ...extra,
  };
  return Object.fromEntries(Object.entries(merged).filter((e): e is [string, string] => e[1] !== undefined));
}

describe("a signal while the answer streams (text output)", () => {
  for (const [signal, code] of SIGNALS) {
    test(`${signal}: exit ${code}, the turn closed as aborted, the lock released, the next --continue goes straight on`, async () => {
      await firstTurn();
      const gate = gated();
      const child = track(spawnChat(["--continue", "-p", "long answer please"], { cwd: root, server }));
      const out = collect(child.stdout);
      const err = collect(child.stderr);
      await gate.reached;
      child.kill(signal);
      const ended = await finish(child, out, err);
      // The HTTP request was closed: the paused answer ends because its client left, not by the gate.
      expect(await server.outcome(1)).toBe("client_gone");
      gate.release();

      expect({ code: ended.code, stderr: ended.stderr }).toEqual({ code, stderr: ended.stderr });
      expectNoStackTrace(ended.stderr);
      // stdout may hold the partial answer (docs: "After a failure, stdout may hold the partial answer").
      expect(ANSWER.startsWith(ended.stdout.trimEnd())).toBe(true);
      const turn = turnRecords(2);
      expect(turn[0]).toMatchObject({ kind: "user", text: "long answer please" });
      const assistant = turn.find((r) => r.kind === "assistant");
      if (assistant?.kind === "assistant") expect(ANSWER.startsWith(assistant.text)).toBe(true);
      expect(turn.at(-1)).toMatchObject({ kind: "turn_end", stop_reason: "aborted" });
      expectWholeTranscripts();
      expect(sessionLocks()).toEqual([]);
      await expectNextContinueUnblocked(`after ${signal}`);
    });
  }
});

describe("a signal while a run_shell command runs (--yes)", () => {
  for (const [signal, code] of SIGNALS) {
    test(`${signal}: exit ${code}, the command and its background job killed (no orphan sleep), the turn closed as aborted`, async () => {
      await firstTurn();
      const marker = sleepMarker();
      // A background job and a foreground child: the whole process group must end.
      server.enqueue(toolCallStream([{ name: "run_shell", arguments: { command: `sleep ${marker} & sleep ${marker}; wait` } }]));
      const child = track(spawnChat(["--continue", "-p", "run the slow thing", "--yes"], { cwd: root, server }));
      const out = collect(child.stdout);
      const err = collect(child.stderr);
      await waitFor(() => sleepPids([marker]).length === 2, `two 'sleep ${marker}' processes`);
      child.kill(signal);
      const ended = await finish(child, out, err);

      expect({ code: ended.code, stderr: ended.stderr }).toEqual({ code, stderr: ended.stderr });
      expectNoStackTrace(ended.stderr);
      // The kill is sent before the CLI exits; give the kernel a moment, an orphan would live 30 s.
      await waitFor(() => sleepPids([marker]).length === 0, `'sleep ${marker}' to be gone after the CLI exited`, 2_000).catch(() => {});
      expect(sleepPids([marker])).toEqual([]);
      const turn = turnRecords(2);
      expect(turn[0]).toMatchObject({ kind: "user", text: "run the slow thing" });
      const call = turn.find((r) => r.kind === "tool_call");
      expect(call).toMatchObject({ kind: "tool_call", name: "run_shell", is_error: true });
      expect(call?.kind === "tool_call" ? call.output : "").toContain("aborted");
      expect(turn.at(-1)).toMatchObject({ kind: "turn_end", stop_reason: "aborted" });
      expect(server.requests).toHaveLength(2); // the first turn and the tool call; nothing sent after the signal
      expectWholeTranscripts();
      expect(sessionLocks()).toEqual([]);
      await expectNextContinueUnblocked(`after ${signal}`);
    });
  }
});

describe("the reader of stdout goes away", () => {
  /**
   * `valarmind chat ARGS | READER`, as a shell runs it; valarmind's exit code is reported on stderr
   * (`valarmind-exit=N`) and `READER_GONE` is printed on stdout once the reader has ended.
   */
  async function pipeline(args: readonly string[], reader: string) {
    const script = `{ "$0" "$@"; echo "valarmind-exit=$?" >&2; } | { ${reader}; echo READER_GONE; }`;
    const child = track(
      Bun.spawn(["bash", "-c", script, process.execPath, ...BUN_FLAGS, CLI_ENTRY, "chat", ...args], {
        cwd: root,
        env: await handEnv(),
        stdin: "ignore",
        stdout: "pipe",
        stderr: "pipe",
        detached: true,
      }),
    );
    return { child, out: collect(child.stdout), err: collect(child.stderr) };
  }

  /** `--json | head -n 1` with the answer paused after two deltas; the gate is released once head has gone. */
  async function headOfJsonStream() {
    await firstTurn();
    // Gated by message, not queued: today the run may exit before it even sends its request.
    const gate = createGate();
    gates.push(gate);
    server.setResponder((body) => {
      const text = lastUserText(body);
      return text === "long answer please" ? gatedAfter(textStream(ANSWER), 6, gate).response : textStream(`echo: ${text}`);
    });
    const { child, out, err } = await pipeline(["--continue", "-p", "long answer please", "--json"], "head -n 1");
    await waitFor(() => out.text.includes("READER_GONE"), "head -n 1 to end");
    gate.release(); // a run that goes on after its reader left can now finish the answer
    const ended = await finish(child, out, err);
    return ended;
  }

  test("--json | head -n 1: one whole event line, valarmind ends at once with exit 0, no EPIPE trace, the lock released, the message kept", async () => {
    const ended = await headOfJsonStream();
    const lines = ended.stdout.split("\n").filter((line) => line !== "");
    expect(lines.at(-1)).toBe("READER_GONE");
    expect(lines).toHaveLength(2);
    expect(JSON.parse(lines[0] ?? "")).toMatchObject({ v: 1, type: "session_start", resumed: true });
    expect(ended.stderr).toContain("valarmind-exit=0"); // README: 0 also when the reader of stdout stops early
    expectNoStackTrace(ended.stderr);
    expect(sessionLocks()).toEqual([]);
    expect(allUserMessages(root)).toContain("long answer please");
    // The turn cut short here is closed by the next run at the latest (see the todo below).
    await expectNextContinueUnblocked("after head", { recovering: true });
    expectWholeTranscripts();
  });

  // Once a bug (src/cli/stdout-closed.ts:9, installed by src/cli/main.ts:25): the first write after the
  // reader left fails with EPIPE and the handler calls process.exit(0) at once, in the middle of the
  // turn. The transcript keeps only the `user` record: no assistant text (the answer is lost, the
  // model request was made and abandoned; a new session's request is not even sent), no
  // `turn_end`; the next `--continue` closes it as `error:interrupted` ("never finished"). The
  // comment there says "What the session wrote ... is already on disk", but the session had not
  // written the turn yet. Suggested fix: on EPIPE, mark stdout closed (drop further writes: the
  // json/text printers become no-ops) and let the turn finish and record itself, then exit 0
  // after `session.close()` as usual (a run whose output nobody reads may also abort the turn through
  // the same AbortController as a signal, so it ends promptly with `turn_end` aborted).
  test("--json | head -n 1: the transcript still gets the whole turn (the answer is not lost because the reader went away)", async () => {
    const ended = await headOfJsonStream();
    expect(ended.stderr).toContain("valarmind-exit=0");
    const turn = turnRecords(2);
    expect(turn.find((r) => r.kind === "assistant")).toMatchObject({ text: ANSWER });
    expect(turn.at(-1)).toMatchObject({ kind: "turn_end", stop_reason: "completed" });
    expectWholeTranscripts();
    await expectNextContinueUnblocked("after head");
  });

  for (const format of ["text", "json"] as const) {
    test(`--output-format ${format} | true (the reader gone before the answer): exit 0, no trace, the whole turn recorded`, async () => {
      await firstTurn();
      const { child, out, err } = await pipeline(["--continue", "-p", "answer nobody reads", "--output-format", format], "true");
      const ended = await finish(child, out, err);
      expect(ended.stdout).toBe("READER_GONE\n");
      expect(ended.stderr).toContain("valarmind-exit=0");
      expectNoStackTrace(ended.stderr);
      const turn = turnRecords(2);
      expect(turn.find((r) => r.kind === "assistant")).toMatchObject({ text: "echo: answer nobody reads" });
      expect(turn.at(-1)).toMatchObject({ kind: "turn_end", stop_reason: "completed" });
      expectWholeTranscripts();
      expect(sessionLocks()).toEqual([]);
      await expectNextContinueUnblocked(`after ${format}`);
    });
  }
});

describe("two --continue started at the same moment on one session", () => {
  /** Pauses the answer to whichever of `messages` reaches the model first (the lock holder's). */
  function gateFirstOf(messages: readonly string[]) {
    const gate = createGate();
    gates.push(gate);
    let first: string | undefined;
    server.setResponder((body) => {
      const text = lastUserText(body);
      if (first === undefined && messages.includes(text)) {
        first = text;
        return gatedAfter(textStream(`echo: ${text}`), 4, gate).response;
      }
      return textStream(`echo: ${text}`);
    });
    return { gate, first: () => first };
  }

  function startBoth(messages: readonly string[], env: Record<string, string> = {}) {
    return messages.map((message) => {
      const child = track(spawnChat(["--continue", "-p", message], { cwd: root, server, env }));
      return { message, child, out: collect(child.stdout), err: collect(child.stderr) };
    });
  }

  /** Both messages started; once the first holds the session and the other has said it waits: which is which. */
  async function holderAndWaiter(messages: readonly string[]) {
    const { gate, first } = gateFirstOf(messages);
    const runs = startBoth(messages);
    await gate.reached;
    const holder = runs.find((r) => r.message === first());
    const waiter = runs.find((r) => r.message !== first());
    if (!holder || !waiter) throw new Error("no holder");
    await waitFor(() => waiter.err.text.includes("in use by another valarmind"), "the waiter's session_busy notice");
    return { holder, waiter, gate };
  }

  test("one waits (a session_busy notice naming the holder's pid) then continues the same session; both turns whole, in order", async () => {
    await firstTurn();
    const messages = ["message from A", "message from B"];
    const { holder, waiter, gate } = await holderAndWaiter(messages);
    expect(waiter.err.text).toContain(`(pid ${holder.child.pid}`);
    expect(holder.err.text).not.toContain("in use by another valarmind");
    gate.release();
    const [held, waited] = await Promise.all([finish(holder.child, holder.out, holder.err), finish(waiter.child, waiter.out, waiter.err)]);

    for (const [run, ended] of [[holder, held], [waiter, waited]] as const) {
      expectNoStackTrace(ended.stderr);
      expect({ message: run.message, code: ended.code }).toEqual({ message: run.message, code: 0 });
      expect(ended.stdout).toBe(`echo: ${run.message}\n`);
    }
    expect(waited.stderr).not.toContain("new session");
    expect(listSessions(workspacePaths(root))).toHaveLength(1);
    expect(latestRecords(root).filter((r) => r.kind === "user").map((r) => [r.turn, r.text])).toEqual([
      [1, "start"],
      [2, holder.message],
      [3, waiter.message],
    ]);
    // The waiter's model saw the holder's finished turn.
    const waiterRequest = server.requests.find((r) => lastUserText(r.body) === waiter.message);
    expect(JSON.stringify(waiterRequest?.body.input)).toContain(`echo: ${holder.message}`);
    expectWholeTranscripts();
    expect(sessionLocks()).toEqual([]);
    await expectNextContinueUnblocked("after both");
  });

  test("VALARMIND_SESSION_WAIT_MS=0: one forks at once (notice naming both ids); both messages kept, every transcript whole", async () => {
    await firstTurn();
    const original = listSessions(workspacePaths(root))[0];
    const messages = ["impatient A", "impatient B"];
    const { gate } = gateFirstOf(messages);
    const runs = startBoth(messages, { VALARMIND_SESSION_WAIT_MS: "0" });
    await gate.reached;
    // The run not paused (the forker, or the holder when the forker reached the model first) ends by itself.
    const firstDone = await Promise.race(runs.map((run) => run.child.exited.then(() => run)));
    expect(firstDone.child.exitCode).toBe(0);
    gate.release();
    const ended = await Promise.all(runs.map((run) => finish(run.child, run.out, run.err)));

    for (const [i, result] of ended.entries()) {
      expectNoStackTrace(result.stderr);
      expect({ i, code: result.code }).toEqual({ i, code: 0 });
      expect(result.stdout).toBe(`echo: ${messages[i]}\n`);
    }
    const forkers = ended.filter((r) => r.stderr.includes("new session"));
    expect(forkers).toHaveLength(1);
    const sessions = listSessions(workspacePaths(root));
    expect(sessions).toHaveLength(2);
    const fork = sessions.find((s) => s.id !== original?.id);
    expect(forkers[0]?.stderr).toContain(`session ${original?.id} is in use by another valarmind`);
    expect(forkers[0]?.stderr).toContain(`new session ${fork?.id}`);
    const forkRecords = fork ? readSession(fork.file).records : [];
    expect(forkRecords.find((r) => r.kind === "note" && r.what === "forked_from")).toBeDefined();
    expect(forkRecords.filter((r) => r.kind === "user")[0]).toMatchObject({ turn: 1, text: "start" });
    const stored = allUserMessages(root);
    for (const message of messages) expect(stored.filter((m) => m === message)).toHaveLength(1);
    expectWholeTranscripts();
    expect(sessionLocks()).toEqual([]);
    await expectNextContinueUnblocked("after the fork", { sessions: 2 });
  });

  test("the holder gets SIGTERM mid-answer while the other waits: 143, and the waiter takes the lock and continues the same session (no fork)", async () => {
    await firstTurn();
    const messages = ["doomed holder", "patient waiter"];
    const { holder, waiter, gate } = await holderAndWaiter(messages);
    holder.child.kill("SIGTERM");
    const [held, waited] = await Promise.all([finish(holder.child, holder.out, holder.err), finish(waiter.child, waiter.out, waiter.err)]);
    gate.release();

    expect(held.code).toBe(143);
    expectNoStackTrace(held.stderr);
    expectNoStackTrace(waited.stderr);
    expect(waited.code).toBe(0);
    expect(waited.stdout).toBe(`echo: ${waiter.message}\n`);
    expect(waited.stderr).not.toContain("new session");
    expect(listSessions(workspacePaths(root))).toHaveLength(1);
    const users = latestRecords(root).filter((r) => r.kind === "user");
    expect(users.map((r) => [r.turn, r.text])).toEqual([
      [1, "start"],
      [2, holder.message],
      [3, waiter.message],
    ]);
    expect(turnRecords(2).at(-1)).toMatchObject({ kind: "turn_end", stop_reason: "aborted" });
    expect(turnRecords(3).at(-1)).toMatchObject({ kind: "turn_end", stop_reason: "completed" });
    expectWholeTranscripts();
    expect(sessionLocks()).toEqual([]);
    await expectNextContinueUnblocked("after the takeover");
  });
});

describe("a second SIGTERM during the shutdown of the first", () => {
  /** SIGTERM, then SIGTERM again `gapMs` later, while the answer streams or a shell command runs. */
  async function doubleTerm(where: "stream" | "tool", gapMs: number, message: string) {
    let marker: string | undefined;
    let gate: Gate | undefined;
    if (where === "tool") {
      marker = sleepMarker();
      server.enqueue(toolCallStream([{ name: "run_shell", arguments: { command: `sleep ${marker}` } }]));
    } else {
      gate = gated();
    }
    const child = track(spawnChat(["--continue", "-p", message, "--yes"], { cwd: root, server }));
    const out = collect(child.stdout);
    const err = collect(child.stderr);
    if (marker !== undefined) {
      const m = marker;
      await waitFor(() => sleepPids([m]).length === 1, `'sleep ${m}'`);
    } else {
      await gate?.reached;
    }
    child.kill("SIGTERM");
    if (gapMs > 0) await Bun.sleep(gapMs);
    child.kill("SIGTERM");
    const ended = await finish(child, out, err);
    gate?.release();
    if (marker !== undefined) {
      const m = marker;
      await waitFor(() => sleepPids([m]).length === 0, `'sleep ${m}' to be gone`, 2_000).catch(() => {});
      expect(sleepPids([m])).toEqual([]);
    }
    return ended;
  }

  for (const where of ["stream", "tool"] as const) {
    test(`${where}: exit 143, no trace, no orphan, every line valid, the message kept, the next --continue goes on in the same session`, async () => {
      await firstTurn();
      // 0 ms: both signals before the first handler is gone; 2 ms: the second one lands during the shutdown.
      for (const [i, gap] of [0, 2, 5].entries()) {
        const message = `twice ${where} ${i}`;
        const ended = await doubleTerm(where, gap, message);
        expect({ gap, code: ended.code }).toEqual({ gap, code: 143 });
        expectNoStackTrace(ended.stderr);
        expect(allUserMessages(root)).toContain(message);
        // The next run neither waits nor forks; it closes the turn if the process could not.
        await expectNextContinueUnblocked(`after twice ${where} ${i}`, { recovering: true });
        expectWholeTranscripts();
      }
    }, 60_000);
  }

  // Once a bug (src/cli/actions/chat.ts:268-280, runHeadless's signal handlers; line 277 removes them): after the first signal
  // each handler removes itself on setImmediate, so proper-lockfile's signal-exit
  // (node_modules/proper-lockfile/lib/lockfile.js:331) is then the only SIGTERM listener, and a
  // second SIGTERM that lands while the turn is still closing (the model stream being torn down, the
  // shell's process group being reaped; ~1-8 ms) kills the process at once: no `turn_end` aborted is
  // written, and during a tool not even the `tool_call` record (what ran, that it was aborted); the
  // next run closes the turn as `error:interrupted` / stop_reason "error" with a "never finished"
  // notice instead of the documented "recorded like Ctrl+C". Observed 8 of 8 times with a 2 ms gap
  // during `sleep`; a `.lock` was also left behind a few times (harmless: its pid is dead, taken
  // over). Exit code stays 143 and nothing is orphaned. Suggested fix: keep one listener per signal
  // installed until `session.close()` has written `turn_end` and released the lock (a repeated
  // signal is then only noted, or forces exit only at the third), so signal-exit never sees itself
  // alone mid-shutdown; or write the aborted `turn_end` synchronously in the second signal's path.
  test("a second SIGTERM 1-8 ms after the first: the signalled process itself still records the turn as aborted and releases its lock", async () => {
    await firstTurn();
    for (const where of ["tool", "stream"] as const) {
      for (const gap of [1, 2, 3, 5, 8]) {
        const message = `twice ${where} ${gap}`;
        const ended = await doubleTerm(where, gap, message);
        expect(ended.code).toBe(143);
        const records = latestRecords(root);
        const user = records.find((r) => r.kind === "user" && r.text === message);
        const turn = user?.kind === "user" ? turnRecords(user.turn) : [];
        if (where === "tool") expect({ gap, call: turn.find((r) => r.kind === "tool_call") }).toMatchObject({ gap, call: { name: "run_shell", is_error: true } });
        expect({ where, gap, end: turn.at(-1) }).toMatchObject({ where, gap, end: { kind: "turn_end", stop_reason: "aborted" } });
        expect(sessionLocks()).toEqual([]);
        expectWholeTranscripts();
      }
    }
  }, 60_000);
});

describe("chat -p - on a pipe that never closes", () => {
  /** `valarmind chat ARGS` with stdin an open pipe the test holds; VALARMIND_STDIN_WAIT_MS=50. */
  async function withOpenPipe(args: readonly string[]) {
    const child = track(
      Bun.spawn([process.execPath, ...BUN_FLAGS, CLI_ENTRY, "chat", ...args], {
        cwd: root,
        env: await handEnv({ VALARMIND_STDIN_WAIT_MS: "50" }),
        stdin: "pipe",
        stdout: "pipe",
        stderr: "pipe",
      }),
    );
    return { child, out: collect(child.stdout), err: collect(child.stderr) };
  }

  /** Closes the test's end of the pipe; the reader may be gone already. */
  async function closeQuietly(sink: { end(): number | Promise<number> }): Promise<void> {
    try {
      await sink.end();
    } catch {
      // EPIPE: the child has exited
    }
  }

  /** Still running after `ms` (10 times the stdin wait bound): `-p -` waits for the end of its message. */
  async function stillRunningAfter(child: { exited: Promise<number> }, ms: number): Promise<boolean> {
    return Promise.race([child.exited.then(() => false), Bun.sleep(ms).then(() => true)]);
  }

  const cases = [
    ["SIGTERM", 143, ""],
    ["SIGINT", 130, "half a mess"],
    ["SIGHUP", 129, "half a mess"],
  ] as const;
  for (const [signal, code, sent] of cases) {
    test(`${sent === "" ? "nothing sent" : "half a message sent"}: -p - waits past VALARMIND_STDIN_WAIT_MS (documented: read to its end), ${signal} ends it at once with ${code}, nothing written`, async () => {
      const { child, out, err } = await withOpenPipe(["-p", "-"]);
      if (sent !== "") {
        child.stdin.write(sent);
        await child.stdin.flush();
      }
      expect(await stillRunningAfter(child, 500)).toBe(true);
      expect(err.text).not.toContain("sent nothing");
      const signalled = performance.now();
      child.kill(signal);
      const ended = await finish(child, out, err);
      expect(performance.now() - signalled).toBeLessThan(5_000);
      expect(ended.code).toBe(code);
      expect(ended.stdout).toBe("");
      expectNoStackTrace(ended.stderr);
      expect(server.requests).toHaveLength(0);
      expect(listSessions(workspacePaths(root))).toEqual([]);
      expect(sessionLocks()).toEqual([]);
      await closeQuietly(child.stdin);
    });
  }

  test("-p -: a message whose first byte comes after the wait bound is still read whole once the pipe closes", async () => {
    const { child, out, err } = await withOpenPipe(["-p", "-"]);
    expect(await stillRunningAfter(child, 300)).toBe(true);
    child.stdin.write("slow ");
    await child.stdin.flush();
    expect(await stillRunningAfter(child, 100)).toBe(true);
    child.stdin.write("message\n");
    await child.stdin.end();
    const ended = await finish(child, out, err);
    expectNoStackTrace(ended.stderr);
    expect(ended.code).toBe(0);
    expect(ended.stdout).toBe("echo: slow message\n");
    expect(latestRecords(root).find((r) => r.kind === "user")).toMatchObject({ text: "slow message\n" });
    expectWholeTranscripts();
    expect(sessionLocks()).toEqual([]);
  });

  // Once a bug (src/cli/actions/chat.ts:159 reads the message, 268-280 install the signal handlers): the
  // handlers are installed only in runHeadless, after readMessage; a signal while `-p -` (or `-p MESSAGE` with a pipe that sent its
  // first bytes) waits for standard input takes the default action. The exit status is still
  // 128+n, but `--output-format json` prints no result object, though docs/agent.md says it is
  // "Printed on stdout when the run ends, success or failure" with error kind `aborted` for a signal.
  // Suggested fix: install the handlers at the start of the `-p` branch of runChat (before
  // readMessage), make readStdin abortable (cancel the reader on abort), and on a signal before
  // the session opened return the signal's exit code with run.failure = {kind: "aborted"}, so
  // reportingResult prints the object (stop_reason null, session_id null).
  test("-p - --output-format json: a signal while waiting for stdin still prints one result object (error kind aborted)", async () => {
    const { child, out, err } = await withOpenPipe(["-p", "-", "--output-format", "json"]);
    expect(await stillRunningAfter(child, 300)).toBe(true);
    child.kill("SIGTERM");
    const ended = await finish(child, out, err);
    expect(ended.code).toBe(143);
    expect(JSON.parse(ended.stdout)).toMatchObject({ type: "result", is_error: true, stop_reason: null, error: { kind: "aborted" } });
    await closeQuietly(child.stdin);
  });
});
