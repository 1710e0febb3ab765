/**
 * Audit of one turn as one event stream and the headless output formats built on it
 * (`chat -p --json` = `--output-format stream-json`, `--output-format json`), through the real CLI
 * and AgentSession against the fake Responses server: every line and the result object checked
 * with ajv against docs/schemas/, the order of the events (turn_start first, turn_end last, every
 * tool_call_start closed), the result object's fields against the stream of the same run, exit
 * codes, hostile text, aborts, and --continue after each kind of turn. What chat-output-format,
 * output-schemas, headless-pipes-audit, cost-figures-audit and faults/kill-signals already cover
 * is not repeated.
 *
 * Written as a fault-finding pass: each defect it found is a test of the correct behaviour, fixed
 * since; a comment marked "Was" says what a consumer saw before.
 */
import { afterAll, afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import Ajv2020 from "ajv/dist/2020.js";
import type { AgentEvent } from "../../src/agent/events.ts";
import { cleanupTempDirs, makeTempDir } from "../support/cli.ts";
import {
  createGate,
  cutAfter,
  failedStream,
  fixtureError,
  gatedAfter,
  lastUserText,
  startFakeResponsesServer,
  textStream,
  toolCallStream,
  type FakeResponse,
  type FakeResponsesServer,
  type Gate,
} from "../support/fake-responses-server.ts";
import { AgentSession } from "../../src/agent/session.ts";
import { startMcpServers } from "../../src/mcp/start-servers.ts";
import { fakeModel, makeGitWorkspace, openAgent, runTurn, testSettings } from "../agent/support/agent-harness.ts";
import { isFoldRequest } from "../agent/support/cost-model.ts";
import { chat, latestRecords, spawnChat } from "../agent/support/cli-chat.ts";

const T = 60_000;
const ECHO_SERVER = resolve(import.meta.dir, "../fixtures/mcp/echo-server.ts");
const ajv = new Ajv2020({ strict: true, allErrors: true });
const validateLine = ajv.compile(JSON.parse(readFileSync(join(import.meta.dir, "../../docs/schemas/event-stream.schema.json"), "utf8")) as object);
const validateResult = ajv.compile(JSON.parse(readFileSync(join(import.meta.dir, "../../docs/schemas/result.schema.json"), "utf8")) as object);

let server: FakeResponsesServer;
let root: string;
let config: string;
const children: Array<{ exitCode: number | null; kill(signal?: number | NodeJS.Signals): void }> = [];
beforeEach(async () => {
  server = startFakeResponsesServer();
  server.setResponder((body) => textStream(`echo: ${lastUserText(body)}`));
  root = await makeGitWorkspace({ "README.md": "# demo\n", "src/app.ts": "export const port = 4173;\n" });
  config = await makeTempDir("valarmind-config-");
  userConfig({});
});
afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill(9);
  await server.close();
});
afterAll(cleanupTempDirs);

/** The user's settings (an isolated XDG_CONFIG_HOME per test). */
function userConfig(settings: Record<string, unknown>): void {
  mkdirSync(join(config, "valarmind"), { recursive: true });
  writeFileSync(join(config, "valarmind", "config.json"), JSON.stringify(settings));
}
const env = (extra: Record<string, string | undefined> = {}) => ({ XDG_CONFIG_HOME: config, VALARMIND_STDIN_WAIT_MS: "0", ...extra });

type Line = Record<string, unknown> & { type: string };
type Result = Record<string, any>;

/** stdout of --json: newline-terminated lines, each valid against the published line schema. */
function streamLines(stdout: string): Line[] {
  const lines = stdout.split("\n");
  if (lines.at(-1) !== "") throw new Error(`stdout does not end with a newline: ${JSON.stringify(stdout.slice(-200))}`);
  return lines.slice(0, -1).map((line) => {
    const value = JSON.parse(line) as Line;
    if (!validateLine(value)) throw new Error(`line fails docs/schemas/event-stream.schema.json: ${ajv.errorsText(validateLine.errors)}\n${line.slice(0, 500)}`);
    return value;
  });
}

/** stdout of --output-format json: exactly one line, valid against the published result schema. */
function oneResult(stdout: string): Result {
  const lines = stdout.split("\n").filter((l) => l !== "");
  if (lines.length !== 1) throw new Error(`expected one result line, got ${lines.length}: ${stdout.slice(0, 500)}`);
  const value = JSON.parse(lines[0] ?? "") as Result;
  if (!validateResult(value)) throw new Error(`result fails docs/schemas/result.schema.json: ${ajv.errorsText(validateResult.errors)}\n${lines[0]?.slice(0, 500)}`);
  return value;
}

const SETTLE_TYPES = new Set(["window_slid", "notice", "usage", "error"]);

/**
 * The order a consumer may rely on: at most one session_start, before the turn; one turn_start
 * and one turn_end of the same turn; request_built steps 1, 2, … (a retried step repeats); every
 * tool_call_start followed by its tool_call_end before anything else of the turn; after turn_end
 * only the settle step's events.
 */
function checkOrder(events: readonly Line[]): { start: Line; end: Line } {
  const types = events.map((e) => e.type);
  expect(types.filter((t) => t === "session_start").length).toBeLessThanOrEqual(1);
  expect(types.filter((t) => t === "turn_start")).toEqual(["turn_start"]);
  expect(types.filter((t) => t === "turn_end")).toEqual(["turn_end"]);
  const startAt = types.indexOf("turn_start");
  const endAt = types.indexOf("turn_end");
  const sessionAt = types.indexOf("session_start");
  if (sessionAt >= 0) expect(sessionAt).toBeLessThan(startAt);
  for (const event of events.slice(0, startAt)) expect(["session_start", "notice"]).toContain(event.type);
  for (const event of events.slice(endAt + 1)) expect(SETTLE_TYPES.has(event.type)).toBe(true);
  for (const event of events.slice(endAt + 1)) if (event.type === "usage") expect(event.purpose).toBe("fold");
  const start = events[startAt] as Line;
  const end = events[endAt] as Line;
  expect(end.turn).toBe(start.turn);
  let step = 0;
  let open: Line | undefined;
  for (const event of events.slice(startAt + 1, endAt)) {
    if (open) {
      expect({ after: open, next: event.type }).toEqual({ after: open, next: "tool_call_end" });
      expect([event.callId, event.name]).toEqual([open.callId, open.name]);
      open = undefined;
      continue;
    }
    if (event.type === "tool_call_end") throw new Error(`tool_call_end without its start: ${JSON.stringify(event)}`);
    if (event.type === "tool_call_start") open = event;
    if (event.type === "request_built") {
      expect(event.turn).toBe(start.turn);
      expect([step, step + 1]).toContain(event.step as number);
      step = event.step as number;
    }
  }
  expect(open).toBeUndefined();
  return { start, end };
}

/**
 * What the result object must say, derived from the stream of a run of the same script;
 * `turnOffset`: 1 when the json run was the next turn of the same session.
 */
function expectResultAgrees(result: Result, events: readonly Line[], code: number, turnOffset = 0): void {
  const { end } = checkOrder(events);
  const usage = events.filter((e) => e.type === "usage") as Array<Line & { usage: Record<string, number>; purpose?: string }>;
  const sum = (key: string, only?: (e: (typeof usage)[number]) => boolean) => usage.filter(only ?? (() => true)).reduce((a, e) => a + (e.usage[key] ?? 0), 0);
  const turnErrors = events.slice(0, events.indexOf(end)).filter((e) => e.type === "error");
  const denied = events.filter((e) => e.type === "tool_call_end" && e.denied === true);
  const targets = new Map(events.filter((e) => e.type === "tool_call_start").map((e) => [e.callId, e.target]));
  expect({
    subtype: result.subtype,
    is_error: result.is_error,
    result: result.result,
    stop_reason: result.stop_reason,
    error_kind: result.error?.kind ?? null,
    turn: result.turn,
    num_turns: result.num_turns,
    usage: result.usage,
    denials: result.permission_denials.map((d: Record<string, string>) => [d.tool_name, d.target]),
  }).toEqual({
    subtype: code === 0 ? "success" : end.stopReason === "max_steps" ? "error_max_turns" : "error_during_execution",
    is_error: code !== 0,
    result: end.text,
    stop_reason: end.stopReason,
    error_kind: code === 0 ? null : ((turnErrors.at(-1)?.kind as string | undefined) ?? "aborted"),
    turn: (end.turn as number) + turnOffset,
    num_turns: Math.max(0, ...events.filter((e) => e.type === "request_built").map((e) => e.step as number)),
    usage: expect.objectContaining({
      input_tokens: sum("input"),
      cached_tokens: sum("cached"),
      output_tokens: sum("output"),
      reasoning_tokens: sum("reasoning"),
      requests: usage.length,
      fold: { requests: usage.filter((e) => e.purpose === "fold").length, input_tokens: sum("input", (e) => e.purpose === "fold"), cached_tokens: sum("cached", (e) => e.purpose === "fold"), output_tokens: sum("output", (e) => e.purpose === "fold") },
    }),
    denials: denied.map((e) => [e.name, targets.get(e.callId)]),
  });
}

/** The session's transcript exists, so `--resume ID` can find it. */
function transcriptExists(sessionId: string): boolean {
  const dir = join(root, ".valarmind", "sessions");
  return existsSync(dir) && readdirSync(dir).some((name) => name.endsWith(`-${sessionId}.jsonl`));
}

const PRICES = { input: 2, cachedInput: 0.5, output: 8 };

const HOSTILE = "a\u2028b\u2029c \u0000nul \ud800 lone \u001b[2J \u009b1m \u202eevil";

interface Scenario {
  name: string;
  /** Answers for one run, made fresh for each run. */
  script: () => FakeResponse[];
  args?: string[];
  stdin?: string;
  code: number;
  stopReason: string;
}

const SCENARIOS: Scenario[] = [
  {
    name: "tools: approved, failing, refused by the approval mode, outside the workspace, over three steps",
    script: () => [
      toolCallStream(
        [
          { name: "read_file", arguments: { path: "src/app.ts" }, callId: "call_read" },
          { name: "read_file", arguments: { path: "missing.ts" }, callId: "call_missing" },
          { name: "write_file", arguments: { path: "notes.md", content: "x\n" }, callId: "call_write" },
          { name: "read_file", arguments: { path: "/etc/hostname" }, callId: "call_outside" },
        ],
        { text: "Looking." },
      ),
      toolCallStream([{ name: "run_shell", arguments: { command: "echo hi" }, callId: "call_shell" }], { reasoningSummary: ["Now a command."] }),
      textStream("Port 4173.", { usage: { input_tokens: 5000, cached_tokens: 4096, output_tokens: 7, reasoning_tokens: 3 } }),
    ],
    code: 0,
    stopReason: "completed",
  },
  {
    name: "a 429 retried",
    script: () => [fixtureError("error_429", { headers: { "retry-after-ms": "0" } }), textStream("after the retry")],
    code: 0,
    stopReason: "completed",
  },
  {
    name: "a context overflow in the stream: the window folds, the step is retried once (--continue)",
    args: ["--continue"],
    script: () => [failedStream("context_length_exceeded", "Your input exceeds the context window of this model."), textStream("after the fold")],
    code: 0,
    stopReason: "completed",
  },
  {
    name: "an answer stopped by the content filter (--continue)",
    args: ["--continue"],
    script: () => [textStream("half an", { status: "incomplete", incompleteReason: "content_filter" })],
    code: 0,
    stopReason: "incomplete",
  },
  {
    name: "a stream cut after some text (--continue)",
    args: ["--continue"],
    script: () => [cutAfter(textStream("partial answer here"), 6)],
    code: 1,
    stopReason: "error",
  },
  {
    name: "a 401 (--continue)",
    args: ["--continue"],
    script: () => [fixtureError("error_401", { status: 401 })],
    code: 1,
    stopReason: "error",
  },
  {
    name: "hostile text from the model and in a tool's arguments",
    script: () => [toolCallStream([{ name: "read_file", arguments: { path: `x${HOSTILE}.ts` }, callId: "call_hostile" }], { text: HOSTILE }), textStream(HOSTILE)],
    code: 0,
    stopReason: "completed",
  },
  {
    name: "piped stdin with a custom command and an @ attachment",
    args: ["--continue"],
    stdin: "log line 1\nlog line 2 \u2028 @README.md\n",
    script: () => [textStream("reviewed")],
    code: 0,
    stopReason: "completed",
  },
];

describe("every kind of turn, in both formats", () => {
  // A probe that holds: kept as a regression net for the stream ↔ result contract.
  test(
    "each line valid and in order, the result object agrees with the stream of the same script, the session id resumable",
    async () => {
      userConfig({ prices: PRICES });
      mkdirSync(join(config, "valarmind", "commands"), { recursive: true });
      writeFileSync(join(config, "valarmind", "commands", "review.md"), "---\ndescription: review\n---\nReview $ARGUMENTS for bugs.\n");
      const seen = new Set<string>();
      for (const scenario of SCENARIOS) {
        const message = scenario.stdin !== undefined ? "/review @src/app.ts" : "go";
        const args = [...(scenario.args ?? []), "-p", message];
        const runEnv = env(scenario.stdin !== undefined ? { VALARMIND_STDIN_WAIT_MS: "5000" } : {});
        server.enqueue(...scenario.script());
        const s = await chat([...args, "--json"], { cwd: root, server, env: runEnv, ...(scenario.stdin !== undefined && { stdin: scenario.stdin }) });
        server.enqueue(...scenario.script());
        const j = await chat([...args, "--output-format", "json"], { cwd: root, server, env: runEnv, ...(scenario.stdin !== undefined && { stdin: scenario.stdin }) });
        expect({ scenario: scenario.name, codes: [s.code, j.code], pending: server.pending() }).toEqual({ scenario: scenario.name, codes: [scenario.code, scenario.code], pending: 0 });
        const events = streamLines(s.stdout);
        const result = oneResult(j.stdout);
        const { end } = checkOrder(events);
        expect({ scenario: scenario.name, stop: end.stopReason }).toEqual({ scenario: scenario.name, stop: scenario.stopReason });
        expectResultAgrees(result, events, j.code, scenario.args?.includes("--continue") ? 1 : 0);
        // The cost is the sum of each request's price (ADR 0077: total_cost_usd from the model's prices).
        const perRequest = events.filter((e) => e.type === "usage").map((e) => e.usage as Record<string, number>);
        const usd = perRequest.reduce((a, u) => a + (((u.input ?? 0) - (u.cached ?? 0)) * PRICES.input + (u.cached ?? 0) * PRICES.cachedInput + (u.output ?? 0) * PRICES.output) / 1_000_000, 0);
        expect(result.total_cost_usd).toBeCloseTo(usd, 12);
        expect(transcriptExists(String(result.session_id))).toBe(true);
        for (const event of events) seen.add(event.type === "usage" && event.purpose === "fold" ? "usage:fold" : event.type);
        if (scenario.name.startsWith("tools")) expect(result.permission_denials.map((d: Record<string, string>) => d.tool_name)).toEqual(["write_file", "run_shell"]);
        if (scenario.stdin !== undefined) expect(lastUserText(server.requests.at(-1)?.body ?? {})).toMatch(/^Review @src\/app\.ts for bugs\.[\s\S]*<piped_input [\s\S]*<attachment path="src\/app\.ts"/);
        if (scenario.name.startsWith("hostile")) {
          expect(s.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e]/);
          expect(j.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e]/);
          expect(result.result).toBe(HOSTILE);
        }
      }

      // A fold after the answer (the settle step): its window_slid and usage come after turn_end.
      root = await makeGitWorkspace({ "README.md": "# demo\n" });
      // Long answers kept whole (no gist, ADR 0087) make keeping old turns dear, so the window folds.
      userConfig({ windowBlockTurns: 1, windowAnswerTokens: 0 });
      server.setResponder((body) => (isFoldRequest(body) ? textStream("- earlier: the app is fine") : textStream("the app is fine. ".repeat(700))));
      for (let n = 0; n < 10 && !seen.has("window_slid"); n++) {
        const r = await chat([...(n > 0 ? ["--continue"] : []), "-p", `question ${n}`, "--json"], { cwd: root, server, env: env() });
        expect(r.code).toBe(0);
        const events = streamLines(r.stdout);
        checkOrder(events);
        for (const event of events) seen.add(event.type === "usage" && event.purpose === "fold" ? "usage:fold" : event.type);
      }
      for (const type of ["session_start", "turn_start", "request_built", "text_delta", "reasoning_delta", "tool_call_start", "tool_call_end", "usage", "usage:fold", "retry", "notice", "error", "window_slid", "turn_end"]) {
        expect(seen).toContain(type);
      }
    },
    T,
  );

  test(
    "MCP tool calls (a result, a tool error) and the in-process stream: the --json lines are the session's events, in order",
    async () => {
      const mcpServers = { echo: { command: process.execPath, args: [ECHO_SERVER] } };
      userConfig({ mcpServers, mcp: { allow: ["echo"] } });
      const script = () => [
        toolCallStream(
          [
            { name: "mcp__echo__echo", arguments: { text: "hi" }, callId: "call_echo" },
            { name: "mcp__echo__fail", arguments: {}, callId: "call_fail" },
            { name: "read_file", arguments: { path: "src/app.ts" }, callId: "call_read" },
          ],
          { text: "Calling." },
        ),
        textStream("done"),
      ];
      server.enqueue(...script());
      const cli = await chat(["-p", "go", "--json"], { cwd: root, server, env: env() });
      expect(cli.code).toBe(0);
      // A machine without bubblewrap adds a sandbox_unavailable notice the in-process session does not tell.
      const lines = streamLines(cli.stdout).filter((e) => e.code !== "sandbox_unavailable");
      checkOrder(lines);
      expect(lines.filter((e) => e.type === "tool_call_end").map((e) => e.isError)).toEqual([false, true, false]);

      // The same turn through AgentSession with the same MCP server, in another workspace.
      const other = await makeGitWorkspace({ "README.md": "# demo\n", "src/app.ts": "export const port = 4173;\n" });
      const base = testSettings();
      const settings = testSettings({ mcpServers, mcp: { ...(base.mcp ?? {}), allow: ["echo"] } } as Partial<typeof base>);
      const mcp = await startMcpServers(settings, other, undefined, false);
      server.enqueue(...script());
      const session = await AgentSession.open({ root: other, settings, model: fakeModel(server), interactive: false, resume: { kind: "new" }, mcp, cwd: other });
      const inProcess = (await runTurn(session, "go")).events;
      await session.close();
      await mcp.close();
      const shape = (list: ReadonlyArray<Record<string, unknown>>) =>
        list.map((e) => {
          const { v: _v, sessionId: _s, transcriptPath: _t, manifest: _m, ...rest } = e;
          return rest;
        });
      expect(shape(lines)).toEqual(shape(inProcess as unknown as Array<Record<string, unknown>>));
    },
    T,
  );

  // Probe that holds: abort mid-tool (SIGINT while run_shell runs), the stream closes the call and
  // the turn, exit 130; --continue then goes on in the same session.
  test(
    "SIGINT mid-tool with --json: the call is closed, turn_end aborted, exit 130; --continue -p --output-format json goes on in that session",
    async () => {
      server.enqueue(toolCallStream([{ name: "run_shell", arguments: { command: "echo started; sleep 30" }, callId: "call_sleep" }], { text: "Running." }));
      const child = spawnChat(["-p", "run it", "--yes", "--sandbox", "off", "--json"], { cwd: root, server, env: env() });
      children.push(child);
      let out = "";
      const reading = (async () => {
        const decoder = new TextDecoder();
        for await (const chunk of child.stdout) out += decoder.decode(chunk, { stream: true });
      })();
      for (let i = 0; i < 200 && !out.includes('"type":"tool_call_start"'); i++) await Bun.sleep(25);
      await Bun.sleep(300); // the command is running
      child.kill("SIGINT");
      expect(await child.exited).toBe(130);
      await reading;
      const events = streamLines(out);
      const { end } = checkOrder(events);
      expect(end).toMatchObject({ stopReason: "aborted", text: "Running." });
      expect(events.find((e) => e.type === "tool_call_end")).toMatchObject({ callId: "call_sleep", isError: true, denied: false });
      const again = await chat(["--continue", "-p", "after", "--output-format", "json"], { cwd: root, server, env: env() });
      expect(again.code).toBe(0);
      expect(oneResult(again.stdout)).toMatchObject({ session_id: events.find((e) => e.type === "session_start")?.sessionId, turn: 2, stop_reason: "completed" });
    },
    T,
  );
});

/** A fold request answered only once the test releases it; `asked` resolves when one arrives. */
function foldGate(): { gate: Gate; asked: Promise<void>; arm: () => void } {
  let armed = false;
  let markAsked!: () => void;
  const asked = new Promise<void>((r) => (markAsked = r));
  const gate = createGate();
  server.setResponder((body) => {
    if (!isFoldRequest(body)) return textStream("ok, noted");
    if (!armed) return textStream("- earlier: log lines were pasted");
    markAsked();
    return gatedAfter(textStream("- earlier: log lines were pasted"), 2, gate).response;
  });
  return { gate, asked, arm: () => (armed = true) };
}

/** A pasted log of ~600 tokens: with maxContextTokens 5000 the sixth turn's request needs a budget fold first. */
const pasted = (n: number, lines = 60) => `message ${n}: ${Array.from({ length: lines }, (_, i) => `log line ${n}.${i} status=${(i * 37) % 500}`).join("\n")}`;

describe("aborts", () => {
  // Was: Ctrl+C (or SIGTERM from a supervisor) while the turn is folding the window because its
  // request is over budget — the fold is the model summarizer's own request, before the turn's
  // first request_built — is reported as a valarmind bug, not as an interruption: `--json` prints
  // {"type":"error","kind":"internal","message":"The operation was aborted."} and a turn_end with
  // stopReason "error"; `--output-format json` says stop_reason "error", error {kind: "internal"}
  // while the exit code is 130; text mode prints "error: The operation was aborted."; the
  // transcript records the turn as failed (note error:internal, stop_reason "error"), where every
  // other abort is recorded as "aborted" (docs/agent.md, Abort). A script that retries on
  // stop_reason "aborted" / kind "aborted", or files a bug on kind "internal", does the wrong
  // thing. Where: src/agent/turn-loop.ts `loop`, the catch around `deps.build(...)`: an error
  // while `signal.aborted` must end the turn with finish("aborted") (no error event), as a
  // model stream's abort does; foldForBudget rethrows the AbortError on purpose.
  test(
    "SIGINT during the budget fold that opens a turn is an abort (stop_reason aborted, kind aborted), not an internal error",
    async () => {
      userConfig({ maxContextTokens: 5000, windowBlockTurns: 1 });
      /** A session of five pasted logs, then `format`'s run of the sixth, interrupted inside its budget fold. */
      const interruptedInFold = async (format: string[]) => {
        root = await makeGitWorkspace({ "README.md": "# demo\n" });
        const folds = foldGate();
        for (let n = 0; n < 5; n++) expect((await chat([...(n > 0 ? ["--continue"] : []), "-p", pasted(n, 20)], { cwd: root, server, env: env() })).code).toBe(0);
        folds.arm();
        // Small turns, then a large one: the window, which the settle steps had no reason to fold
        // (the next turn of their size fitted), must fold before this turn's request.
        const child = spawnChat(["--continue", "-p", pasted(5, 260), ...format], { cwd: root, server, env: env() });
        children.push(child);
        expect(await Promise.race([folds.asked.then(() => "fold asked"), child.exited.then(() => "exited before a fold")])).toBe("fold asked");
        child.kill("SIGINT");
        const [out, code] = await Promise.all([new Response(child.stdout).text(), child.exited]);
        folds.gate.release();
        const recorded = latestRecords(root).filter((r) => r.kind === "turn_end").at(-1);
        return { out, code, recordedStop: recorded?.kind === "turn_end" ? recorded.stop_reason : undefined };
      };

      const stream = await interruptedInFold(["--json"]);
      const events = streamLines(stream.out);
      const { end } = checkOrder(events);
      expect(events.some((e) => e.type === "request_built")).toBe(false); // interrupted inside the fold, before the first request
      const json = await interruptedInFold(["--output-format", "json"]);
      const result = oneResult(json.out);

      expect({
        codes: [stream.code, json.code],
        streamErrors: events.filter((e) => e.type === "error").map((e) => e.kind),
        streamStop: end.stopReason,
        recordedStop: [stream.recordedStop, json.recordedStop],
        resultStop: result.stop_reason,
        resultError: result.error?.kind,
      }).toEqual({ codes: [130, 130], streamErrors: [], streamStop: "aborted", recordedStop: ["aborted", "aborted"], resultStop: "aborted", resultError: "aborted" });
    },
    T,
  );
});

describe("the result object's fields are true", () => {
  // Was: when the turn fails before its transcript exists (here `.valarmind/sessions` is a file,
  // so the new session cannot be created; a full disk or a read-only workspace does the same), the
  // result still names the session: `session_id` is the id AgentSession.open made up in memory and
  // `turn` is 0 — a session and a turn that never existed. A script that stores session_id for a
  // later `--resume` gets "no session 'ID' in …/sessions" (exit 2). The `--json` stream shows the same
  // shape: an error and a `turn_end` with turn 0 and no session_start or turn_start before it.
  // Where: src/cli/actions/chat.ts runHeadless sets `run.sessionId = session.sessionId` right
  // after open; it should be the id of a session that has a transcript (set it from the
  // session_start event / session.transcriptPath after the turn, else leave it null), and
  // src/ui/print-result.ts should report turn null when no turn_start came (or
  // AgentSession.submit's failure path in src/agent/session.ts should not invent turn_end{turn: 0}).
  test(
    "a turn that fails before its session exists reports session_id null (or one --resume accepts) and turn null",
    async () => {
      mkdirSync(join(root, ".valarmind"), { recursive: true });
      writeFileSync(join(root, ".valarmind", "sessions"), "in the way\n");
      const r = await chat(["-p", "hello", "--output-format", "json"], { cwd: root, server, env: env() });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(".valarmind/sessions");
      const result = oneResult(r.stdout);
      expect(server.requests).toHaveLength(0);
      // Clear the way and try to resume what the result named.
      rmSync(join(root, ".valarmind", "sessions"));
      const resumed = typeof result.session_id === "string" ? await chat(["--resume", result.session_id, "-p", "again"], { cwd: root, server, env: env() }) : undefined;
      expect({
        session_id_resumable: result.session_id === null || resumed?.code === 0,
        turn: result.turn,
      }).toEqual({ session_id_resumable: true, turn: null });
    },
    T,
  );
});

describe("the in-process stream (AgentSession)", () => {
  // Was (low): `session.submit()` while the session is busy (a turn or its settle step still
  // running) returns a stream with only an `error` event and no `turn_end`, although ADR 0073 and
  // docs/agent.md promise "session.submit ends with turn_end" and show `for await … // the last
  // event is turn_end`. An embedding script (or test/agent/support/agent-harness.ts runTurn, which
  // throws on it) that waits for turn_end to know the turn is over never sees it; the REPL copes
  // only because use-turn-runner.ts synthesises a `turn_closed` when turn_end is missing. Where:
  // src/agent/session.ts `submit`, the `this.busy` branch: emit a turn_end (turn
  // this.memory.lastTurn, text "", stopReason "error") before `stream.end(...)`, as the
  // runExclusive failure path already does.
  test(
    "submit while a turn is running ends its stream with turn_end (stopReason error) after the error",
    async () => {
      const { session } = await openAgent(root, server);
      const { response, gate } = gatedAfter(textStream("a slow answer"), 4);
      server.enqueue(response);
      const first = session.submit("one", new AbortController().signal);
      const firstTypes: string[] = [];
      const draining = (async () => {
        for await (const event of first) firstTypes.push(event.type);
      })();
      await gate.reached;
      const second: AgentEvent[] = [];
      for await (const event of session.submit("two", new AbortController().signal)) second.push(event);
      gate.release();
      await draining;
      await session.close();
      expect(firstTypes.at(-1)).toBe("turn_end");
      expect(second.map((e) => e.type)).toEqual(["error", "turn_end"]);
      expect(second.at(-1)).toMatchObject({ type: "turn_end", stopReason: "error" });
    },
    T,
  );
});
