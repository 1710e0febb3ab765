/**
 * Audit of `valarmind chat -p` as scripts and CI use it, through the real CLI against the fake
 * Responses server: the readers of stdout and stderr going away, output that cannot be written,
 * odd standard inputs, hostile model text in `--json`, the step limit, the environment a CI job
 * sets, and a workspace the user cannot write. What existing tests (chat-pipes, chat-output-format,
 * faults/headless-signals, faults/disk-faults) already cover is not repeated.
 *
 * Written as a fault-finding pass; a comment marked "Was" says what a fixed defect did and where.
 */
import { afterAll, afterEach, beforeEach, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { BUN_FLAGS, CLI_ENTRY, cleanupTempDirs, makeTempDir, readUntil } from "../support/cli.ts";
import {
  conversationMessages,
  gatedAfter,
  httpError,
  lastUserText,
  startFakeResponsesServer,
  textStream,
  toolCallStream,
  type FakeResponsesServer,
} from "../support/fake-responses-server.ts";
import { makeGitWorkspace } from "../agent/support/agent-harness.ts";
import { chat, chatEnv, jsonEvents, latestRecords } from "../agent/support/cli-chat.ts";

const T = 20_000;
let server: FakeResponsesServer;
let root: string;
let config: string;
const children: Array<{ pid: number; exitCode: number | null; kill(signal?: number): void }> = [];

beforeEach(async () => {
  server = startFakeResponsesServer();
  server.setResponder((body) => textStream(`echo: ${lastUserText(body)}`));
  root = await makeGitWorkspace({ "README.md": "# demo\n" });
  config = await makeTempDir("valarmind-config-");
});
afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill(9);
  await server.close();
});
afterAll(cleanupTempDirs);

const STACK = /^\s+at .+[:(]/m;

/** The environment a spawned run gets (as test/support/cli.ts gives it), plus `extra`. */
function env(extra: Record<string, string | undefined> = {}): Record<string, string> {
  const merged: Record<string, string | undefined> = { ...process.env, NO_COLOR: "1", XDG_CONFIG_HOME: config, ...chatEnv({ server }), VALARMIND_STDIN_WAIT_MS: "0", ...extra };
  return Object.fromEntries(Object.entries(merged).filter((e): e is [string, string] => e[1] !== undefined));
}

/** `valarmind chat ARGS` through `sh -c` with a redirection (`>/dev/full`, `<&-`, `< dir`). */
async function chatRedirected(redirect: string, args: readonly string[], extraEnv: Record<string, string | undefined> = {}) {
  const child = Bun.spawn(["sh", "-c", `exec "$@" ${redirect}`, "sh", process.execPath, ...BUN_FLAGS, CLI_ENTRY, "chat", ...args], {
    cwd: root,
    env: env(extraEnv),
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  children.push(child);
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { code, stdout, stderr };
}

function spawnRaw(args: readonly string[], stdin: "ignore" | Uint8Array, extraEnv: Record<string, string | undefined> = {}) {
  const child = Bun.spawn([process.execPath, ...BUN_FLAGS, CLI_ENTRY, "chat", ...args], { cwd: root, env: env(extraEnv), stdin, stdout: "pipe", stderr: "pipe" });
  children.push(child);
  return child;
}

/** The rest of a stream `readUntil` started reading. */
async function readRest(stream: ReadableStream<Uint8Array>): Promise<string> {
  let text = "";
  const decoder = new TextDecoder();
  for await (const chunk of stream) text += decoder.decode(chunk, { stream: true });
  return text;
}

function lastTurnEnd() {
  return latestRecords(root).filter((r) => r.kind === "turn_end").at(-1);
}

/** A promise the fake server's responder can wait on, released by the test. */
function latch() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

describe("the readers of stdout and stderr", () => {
  // Was: `valarmind chat -p … --verbose 2>&1 | head` (or a log collector closing stderr early).
  // src/cli/stdout-closed.ts guards only process.stdout against EPIPE; process.stderr has no 'error'
  // listener, so the next note/tool line written after the reader left is an uncaught EPIPE error:
  // Bun prints "EPIPE: broken pipe, write … at runHeadless (src/cli/actions/chat.ts)" and the process
  // exits 1 although the turn completed (the answer is printed and recorded). With `set -o pipefail`
  // the CI step fails. Fix: in endQuietlyWhenStdoutCloses also listen on process.stderr and swallow
  // EPIPE there (stop writing notes; never change the exit code).
  test("stderr's reader goes away mid-turn (--verbose): the turn completes, exit 0, the answer on stdout", async () => {
    const gate = latch();
    server.setResponder(async (body, index) => {
      if (index === 0) return toolCallStream([{ name: "read_file", arguments: { path: "README.md" } }]);
      if (index === 1) {
        await gate.opened;
        return toolCallStream([{ name: "read_file", arguments: { path: "README.md" } }]);
      }
      return textStream(`done: ${lastUserText(body)}`);
    });
    const child = spawnRaw(["-p", "look twice", "--verbose"], "ignore");
    const stdout = new Response(child.stdout).text();
    await readUntil(child.stderr, (text) => text.includes("read_file: ok"));
    await child.stderr.cancel(); // the reader of stderr is gone
    gate.open();
    const code = await child.exited;
    expect(await stdout).toBe("done: look twice\n");
    expect(lastTurnEnd()).toMatchObject({ stop_reason: "completed" });
    expect(code).toBe(0);
  }, T);

  // Was: `valarmind chat -p … > answer.txt` on a full disk (here /dev/full). The 'error'
  // listener of src/cli/stdout-closed.ts rethrows every error but EPIPE, so ENOSPC becomes an
  // uncaught exception: Bun prints its source excerpt and stack ("error: ENOSPC: no space left on
  // device, write at <anonymous> (src/cli/stdout-closed.ts:18:39) … Bun v1.4.5") once per failed
  // write (five times for --json). Exit 1 is right; the trace is not (README: no stack trace; a file
  // that cannot be written is a failure with a message). Fix: for any other error, write one line
  // "valarmind: cannot write the output to standard output: <reason>" to stderr, drop later stdout
  // writes like a closed reader, let the turn be recorded, and exit 1.
  for (const format of [[], ["--json"]] as const) {
    test(`stdout on a full device (chat -p ${format.join(" ")} >/dev/full): exit 1, one line naming standard output, no stack trace`, async () => {
      const r = await chatRedirected(">/dev/full", ["-p", "hello", ...format]);
      expect(r.code).toBe(1);
      expect(lastTurnEnd()).toMatchObject({ stop_reason: "completed" });
      expect(r.stderr).not.toMatch(STACK);
      expect(r.stderr).not.toContain("Bun v");
      expect(r.stderr).toMatch(/standard output/i);
      // Said once, whatever number of writes failed.
      expect(r.stderr.split("\n").filter((line) => /ENOSPC|no space left/i.test(line))).toEqual(["valarmind: cannot write to standard output: ENOSPC: no space left on device, write"]);
    }, T);
  }

  // Was: with `--json | head -n 1` a turn that FAILS after the reader left exits 0, so
  // `set -o pipefail` CI cannot see a 401 / 5xx / budget failure. runHeadless
  // (src/cli/actions/chat.ts) returns 0 for `readerGone` before looking at stopReason. Fix: let the
  // reader going away only excuse the EPIPE itself: compute the code from stopReason / overBudget
  // as usual (0 for completed, 1 error, 2 budget).
  test("--json: a model error after the reader of stdout left still exits 1", async () => {
    const gate = latch();
    server.setResponder(async () => {
      await gate.opened;
      return httpError(401, { message: "Incorrect API key provided: sk-bad.", type: "invalid_request_error", code: "invalid_api_key" });
    });
    const child = spawnRaw(["-p", "hello", "--json"], "ignore");
    const stderr = new Response(child.stderr).text();
    await readUntil(child.stdout, (text) => text.includes('"type":"request_built"'));
    await child.stdout.cancel(); // `| head -n 3` has what it wanted
    gate.open();
    const code = await child.exited;
    expect(lastTurnEnd()).toMatchObject({ stop_reason: "error" });
    expect(await stderr).not.toMatch(STACK);
    expect(code).toBe(1);
  }, T);

  // Was, same cause by another path: with --output-format json the result is the only stdout
  // write, made after runHeadless has unset its handler, so src/cli/stdout-closed.ts calls
  // process.exit(0) on its EPIPE: `valarmind chat -p … --output-format json | true` exits 0 on a 401.
  // Fix: the EPIPE handler must not pick the exit code; keep process.exitCode as the run set it.
  test("--output-format json: a model error with the reader of stdout gone still exits 1", async () => {
    server.setResponder(() => httpError(401, { message: "Incorrect API key provided: sk-bad.", code: "invalid_api_key" }));
    const child = spawnRaw(["-p", "hello", "--output-format", "json"], "ignore");
    await child.stdout.cancel();
    const code = await child.exited;
    expect(lastTurnEnd()).toMatchObject({ stop_reason: "error" });
    expect(code).toBe(1);
  }, T);

  test("a closed stderr (2>&-) with a refused call to report: the turn completes, exit 0, the answer on stdout", async () => {
    server.enqueue(toolCallStream([{ name: "write_file", arguments: { path: "x.txt", content: "x\n" } }]), textStream("could not write"));
    const r = await chatRedirected("2>&-", ["-p", "write x"]);
    expect(r).toMatchObject({ code: 0, stdout: "could not write\n" });
    expect(lastTurnEnd()).toMatchObject({ stop_reason: "completed" });
  }, T);
});

describe("standard input", () => {
  // Was: `valarmind chat -p - < some/dir` (a typo in a script). readStdin (src/cli/piped-input.ts)
  // calls Bun.stdin.stream() on a directory: "valarmind: unexpected error: Error: EISDIR: illegal
  // operation on a directory, fstat" with a stack trace, exit 1. Fix: in readMessage check
  // fstat(0) first and throw a UsageError "-p -: standard input is a directory" (exit 2).
  test("-p - with a directory as standard input: a usage error (exit 2) saying so, no stack trace, nothing sent", async () => {
    mkdirSync(join(root, "logs"));
    const r = await chatRedirected("< logs", ["-p", "-"]);
    expect(r.stderr).not.toMatch(STACK);
    expect(r.stderr).not.toContain("unexpected error");
    expect(r.code).toBe(2);
    expect(server.requests).toHaveLength(0);
  }, T);

  test("-p MESSAGE with a directory as standard input: not read, the turn runs", async () => {
    mkdirSync(join(root, "logs"));
    const r = await chatRedirected("< logs", ["-p", "hello"]);
    expect(r).toMatchObject({ code: 0, stdout: "echo: hello\n", stderr: "" });
  }, T);

  test("a closed standard input (<&-): -p MESSAGE runs unchanged; -p - is 'standard input was empty' (exit 2)", async () => {
    const r = await chatRedirected("<&-", ["-p", "hello"]);
    expect(r).toMatchObject({ code: 0, stdout: "echo: hello\n", stderr: "" });
    expect(lastUserText(server.requests[0]?.body ?? {})).toBe("hello");
    const dash = await chatRedirected("<&-", ["-p", "-"]);
    expect(dash.code).toBe(2);
    expect(dash.stderr).toContain("-p -: standard input was empty");
  }, T);

  test("20 MB piped in: exit 2 at once (the 1 MiB cap), nothing written or sent, no trace", async () => {
    const started = performance.now();
    const child = spawnRaw(["-p", "explain"], new Uint8Array(20 * 1024 * 1024).fill(0x78));
    const [stderr, code] = await Promise.all([new Response(child.stderr).text(), child.exited]);
    expect(code).toBe(2);
    expect(stderr).toContain("larger than the 1048576 bytes");
    expect(stderr).not.toMatch(STACK);
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(server.requests).toHaveLength(0);
    expect(existsSync(join(root, ".valarmind", "sessions"))).toBe(false);
  }, T);

  test("invalid UTF-8 becomes U+FFFD and a byte-order mark is dropped, in -p - and in a pipe appended to -p", async () => {
    const bytes = new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode("caf"), 0xe9, 0x20, 0xc3, 0x28, 0x0a]);
    const dash = spawnRaw(["-p", "-"], bytes);
    expect(await dash.exited).toBe(0);
    expect(lastUserText(server.requests[0]?.body ?? {})).toBe("caf\ufffd \ufffd(\n");
    const piped = spawnRaw(["-p", "what is it?"], bytes, { VALARMIND_STDIN_WAIT_MS: "5000" });
    expect(await piped.exited).toBe(0);
    const sent = conversationMessages(server.requests[1]?.body ?? {}).findLast((m) => m.role === "user")?.content ?? "";
    expect(sent).toContain('">\ncaf\ufffd \ufffd(\n</piped_input>');
  }, T);
});

describe("--json with hostile model text", () => {
  const HOSTILE = "line1\nline2\u2028sep\u2029para \ud800 lone \u0000nul \u001b[31mred\u001b[0m \u009b2J \u202eevil end";

  test("every stdout line is one v:1 JSON event, no raw escape or C1 byte, the text round-trips; --continue goes on", async () => {
    server.enqueue(textStream(HOSTILE));
    const r = await chat(["-p", "say it", "--json"], { cwd: root, server });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
    expect(r.stdout.endsWith("\n")).toBe(true);
    expect(r.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e]/);
    const events = jsonEvents(r.stdout);
    expect(events.every((e) => e.v === 1)).toBe(true);
    expect(events.at(-1)).toMatchObject({ type: "turn_end", text: HOSTILE, stopReason: "completed" });
    expect(events.filter((e) => e.type === "text_delta").map((e) => e.delta).join("")).toBe(HOSTILE);
    const again = await chat(["--continue", "-p", "again", "--json"], { cwd: root, server });
    expect(again.code).toBe(0);
    expect(jsonEvents(again.stdout).at(-1)).toMatchObject({ type: "turn_end", text: "echo: again" });
  }, T);

  test("text mode into a pipe: the answer byte for byte (the lone surrogate as U+FFFD), one trailing newline", async () => {
    server.enqueue(textStream(HOSTILE));
    const r = await chat(["-p", "say it"], { cwd: root, server });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${HOSTILE.replace("\ud800", "\ufffd")}\n`);
  }, T);
});

describe("exit codes", () => {
  test("the step limit (maxStepsPerTurn 2): exit 1, the message on stderr, error_max_turns in json, max_steps recorded", async () => {
    mkdirSync(join(config, "valarmind"), { recursive: true });
    await Bun.write(join(config, "valarmind", "config.json"), JSON.stringify({ maxStepsPerTurn: 2 }));
    server.setResponder(() => toolCallStream([{ name: "read_file", arguments: { path: "README.md" } }]));
    const r = await chat(["-p", "loop", "--output-format", "json"], { cwd: root, server, env: { XDG_CONFIG_HOME: config } });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("maxStepsPerTurn");
    expect(JSON.parse(r.stdout)).toMatchObject({ subtype: "error_max_turns", is_error: true, stop_reason: "max_steps", num_turns: 2 });
    expect(lastTurnEnd()).toMatchObject({ stop_reason: "max_steps" });
    expect(server.requests).toHaveLength(2);
  }, T);

  test("SIGTERM mid-answer with --json: exit 143, every line valid, the last turn_end aborted with the partial text; --continue keeps that session", async () => {
    const { response, gate } = gatedAfter(textStream("partial words then more"), 6);
    server.enqueue(response);
    const child = spawnRaw(["-p", "long one", "--json"], "ignore");
    const out = await readUntil(child.stdout, (text) => text.includes('"type":"text_delta"'));
    await gate.reached;
    child.kill(15);
    const rest = await readRest(child.stdout);
    expect(await child.exited).toBe(143);
    gate.release();
    const events = jsonEvents(out + rest);
    const end = events.at(-1);
    expect(end).toMatchObject({ type: "turn_end", stopReason: "aborted" });
    expect(String(end?.text)).toStartWith("partial");
    expect(lastTurnEnd()).toMatchObject({ stop_reason: "aborted" });
    const sessionId = events.find((e) => e.type === "session_start")?.sessionId;
    const again = await chat(["--continue", "-p", "next", "--json"], { cwd: root, server });
    expect(again.code).toBe(0);
    expect(again.stderr).toBe("");
    expect(jsonEvents(again.stdout)[0]).toMatchObject({ type: "session_start", sessionId, resumed: true });
  }, T);
});

describe("the environment of a CI job", () => {
  test("NO_COLOR unset, FORCE_COLOR=3, CI=true, TERM=xterm-256color: no escape sequence on stdout or stderr", async () => {
    server.enqueue(toolCallStream([{ name: "write_file", arguments: { path: "x.txt", content: "x\n" } }]), textStream("could not write"));
    const r = await chatRedirected("", ["-p", "write x", "--verbose"], { NO_COLOR: undefined, FORCE_COLOR: "3", CI: "true", TERM: "xterm-256color" });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("could not write\n");
    expect(r.stderr).toContain("write_file: denied");
    expect(r.stdout + r.stderr).not.toContain("\u001b");
  }, T);

  const setpriv = Bun.which("setpriv");
  test.skipIf(process.getuid?.() !== 0 || setpriv === null)("a workspace another user owns (.valarmind not writable): exit 1 naming the path, no trace, nothing sent", async () => {
    const first = await chat(["-p", "first"], { cwd: root, server });
    expect(first.code).toBe(0);
    chmodSync(root, 0o755);
    const home = await makeTempDir("valarmind-home-");
    chmodSync(home, 0o777);
    for (const args of [["-p", "hello"], ["--continue", "-p", "hello"]]) {
      const child = Bun.spawn([setpriv ?? "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", process.execPath, ...BUN_FLAGS, CLI_ENTRY, "chat", ...args], {
        cwd: root,
        env: env({ HOME: home, XDG_CONFIG_HOME: home }),
        stdin: "ignore",
        stdout: "pipe",
        stderr: "pipe",
      });
      const [stderr, code] = await Promise.all([new Response(child.stderr).text(), child.exited]);
      expect({ args, code }).toEqual({ args, code: 1 });
      expect(stderr).toContain(join(root, ".valarmind"));
      expect(stderr).toMatch(/permission denied/i);
      expect(stderr).not.toMatch(STACK);
    }
    expect(server.requests).toHaveLength(1);
    expect(readdirSync(join(root, ".valarmind", "sessions")).filter((f) => f.endsWith(".jsonl"))).toHaveLength(1);
    expect(readFileSync(join(root, "README.md"), "utf8")).toBe("# demo\n");
  }, T);
});
