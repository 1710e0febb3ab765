/**
 * Audit of the session cost figures (issue 12 deliverable 4): the REPL's status line and `/cost`
 * (SessionCost, through the real SessionChatController), `chat -p --output-format json` and
 * `--json`, checked against the usage the fake Responses server actually reported.
 * Written as a fault-finding pass; the defects it found are fixed (fractional and huge counts,
 * a fold's usage lost with its manifest, /cost's wording after a resume or with no usage reported,
 * price formatting, the status line's cents).
 */
import { afterAll, afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Value } from "@sinclair/typebox/value";
import { costLines } from "../../src/agent/session-cost.ts";
import { HeadlessResultSchema } from "../../src/agent/headless-result.ts";
import type { AgentEvent } from "../../src/agent/events.ts";
import { SessionChatController } from "../../src/cli/chat/chat-controller.ts";
import { statusFields } from "../../src/ui/status/format-status.ts";
import { cleanupTempDirs, makeTempDir } from "../support/cli.ts";
import {
  buildResponseStream,
  cutAfter,
  failedStream,
  httpError,
  lastUserText,
  startFakeResponsesServer,
  textStream,
  toolCallStream,
  type FakeResponsesServer,
  type StreamResponse,
} from "../support/fake-responses-server.ts";
import { parseSseData, formatSseEvent } from "../support/sse-script.ts";
import { fakeModel, gatedBefore, makeGitWorkspace, openAgent, recordsOf, runTurn, testSettings } from "./support/agent-harness.ts";
import { chat, jsonEvents } from "./support/cli-chat.ts";
import { isFoldRequest } from "./support/cost-model.ts";

type Reported = { input: number; cached: number; output: number; fold: boolean };

let server: FakeResponsesServer;
let root: string;
/** What the server reported, request by request (only completed answers carry usage). */
let reported: Reported[];
beforeEach(async () => {
  server = startFakeResponsesServer();
  root = await makeGitWorkspace({ "README.md": "# app\n" });
  reported = [];
});
afterEach(async () => {
  await server.close();
});
afterAll(cleanupTempDirs);

/** A text answer with this usage, noted in `reported`. */
function answer(text: string, usage: { input: number; cached: number; output: number }, fold = false): StreamResponse {
  reported.push({ ...usage, fold });
  return textStream(text, { usage: { input_tokens: usage.input, cached_tokens: usage.cached, output_tokens: usage.output, reasoning_tokens: 0 } });
}

/** A text answer whose final `usage` object is exactly `usage` (hostile servers). */
function rawUsageStream(text: string, usage: unknown): StreamResponse {
  const events = parseSseData(buildResponseStream({ text })) as Array<{ type: string; response?: Record<string, unknown> }>;
  const last = events.at(-1);
  if (last?.response) last.response.usage = usage;
  return { kind: "stream", body: events.map((e) => formatSseEvent(e)).join(""), label: "raw usage" };
}

function sum(list: Reported[]): { input: number; cached: number; output: number } {
  return list.reduce((a, r) => ({ input: a.input + r.input, cached: a.cached + r.cached, output: a.output + r.output }), { input: 0, cached: 0, output: 0 });
}

/** Long answers make old turns dear to keep: the window folds every few turns. Usage differs per request. */
function foldingResponder(long = true): void {
  server.setResponder((body, index) => {
    const usage = { input: 3000 + index * 17, cached: index % 3 === 0 ? 0 : 2048 + index, output: 40 + index };
    return isFoldRequest(body) ? answer("- earlier: long answers about the app", usage, true) : answer(long ? `${lastUserText(body)}: ${"the app is fine. ".repeat(1200)}` : "noted", usage);
  });
}

/** A pasted log: large turns whose rent soon pays for a fold at settle (rent or buy). */
const paste = (n: number) => `message ${n}: ${Array.from({ length: 100 }, (_, i) => `log line ${n}.${i} status=${(i * 37) % 500}`).join("\n")}`;

async function userConfig(settings: Record<string, unknown>): Promise<string> {
  const home = await makeTempDir("valarmind-xdg-");
  mkdirSync(join(home, "valarmind"), { recursive: true });
  writeFileSync(join(home, "valarmind", "config.json"), JSON.stringify(settings));
  return home;
}

async function controllerFor(settings: Record<string, unknown> = {}, resume: { kind: "new" } | { kind: "latest" } = { kind: "new" }) {
  return SessionChatController.open({ root, settings: testSettings(settings), model: fakeModel(server), interactive: false, resume, warnings: [] });
}

async function drain(events: AsyncIterable<AgentEvent>): Promise<AgentEvent[]> {
  const out: AgentEvent[] = [];
  for await (const e of events) out.push(e);
  return out;
}

describe("a multi-turn session with folds", () => {
  test("REPL: /cost and the status line equal the server's usage, every fold request counted once", async () => {
    foldingResponder(false);
    // The default of 1 kept turn: with 4 kept, these turns reach FOLD_RENT_FACTOR × a fold's cost only when the window is full.
    const controller = await controllerFor({ windowBlockTurns: 1 });
    const events: AgentEvent[] = [];
    for (let n = 1; n <= 19 && !events.some((e) => e.type === "window_slid"); n++) events.push(...(await drain(controller.submit(paste(n), new AbortController().signal))));
    // /compact folds the whole window with a model request of its own: a fold too.
    expect((await controller.runCommand("compact", "")).lines[0]).toMatch(/^folded \d+ turn/);
    events.push(...(await drain(controller.submit("question 8", new AbortController().signal))));
    const folds = reported.filter((r) => r.fold);
    expect(events.some((e) => e.type === "window_slid")).toBe(true);
    expect(folds.length).toBeGreaterThanOrEqual(2);
    expect(server.requests).toHaveLength(reported.length);

    const f = controller.status().cost;
    const all = sum(reported);
    const foldSum = sum(folds);
    expect(f).toMatchObject({ requests: reported.length, foldRequests: folds.length, ...all, fold: foldSum });
    expect(f?.effectiveInput).toBeCloseTo(all.input - all.cached + 0.1 * all.cached, 6);
    // The usage events the front end saw (turn + settle streams) are the same requests, once each.
    const usageEvents = events.filter((e): e is Extract<AgentEvent, { type: "usage" }> => e.type === "usage");
    expect(usageEvents).toHaveLength(reported.length);
    expect(usageEvents.filter((e) => e.purpose === "fold")).toHaveLength(folds.length);
    const cost = await controller.runCommand("cost", "");
    expect(cost.lines[0]).toBe(`requests: ${reported.length} (${folds.length} to fold the window)`);
    const fields = statusFields(controller.status());
    expect(fields.cached).toBe(`${Math.round((all.cached / all.input) * 100)}%`);
    await controller.close();
  }, 20_000);

  test("a budget fold inside a turn (the build asked for it) is counted once, as a fold", async () => {
    foldingResponder();
    const { session } = await openAgent(root, server, { settings: { maxContextTokens: 12_000, windowBlockTurns: 1, windowAnswerTokens: 0 } });
    const events: AgentEvent[] = [];
    for (let n = 1; n <= 5; n++) events.push(...(await runTurn(session, `question ${n}`)).events);
    const f = session.cost.figures();
    expect(recordsOf(session, "summary").some((r) => r.reason === "budget")).toBe(true);
    expect(f).toMatchObject({ requests: reported.length, foldRequests: reported.filter((r) => r.fold).length, ...sum(reported) });
    expect(events.filter((e) => e.type === "usage")).toHaveLength(reported.length);
    // The transcript's turn_end usage is the turns' own part (no fold in it).
    const turnEnds = recordsOf(session, "turn_end").map((r) => r.usage ?? { input: 0, cached: 0, output: 0 });
    expect(turnEnds.reduce((a, u) => a + u.input, 0)).toBe(sum(reported.filter((r) => !r.fold)).input);
    await session.close();
  }, 20_000);
});

describe("failed, aborted and retried requests", () => {
  const step1 = { input: 4000, cached: 3072, output: 25 };
  const readCall = () => {
    reported.push({ ...step1, fold: false });
    return toolCallStream([{ name: "read_file", arguments: { path: "README.md" } }], {
      text: "Reading.",
      usage: { input_tokens: step1.input, cached_tokens: step1.cached, output_tokens: step1.output, reasoning_tokens: 0 },
    });
  };

  test("chat -p json: 429 and 500 before the answer add nothing; only the answer's usage counts", async () => {
    server.enqueue(
      httpError(429, { message: "slow down", type: "requests", code: "rate_limit_exceeded" }, { "retry-after-ms": "0" }),
      httpError(500, { message: "oops", type: "server_error" }, { "retry-after-ms": "0" }),
      answer("made it", { input: 5000, cached: 4096, output: 20 }),
    );
    const r = await chat(["-p", "hi", "--output-format", "json"], { cwd: root, server });
    expect(r.code).toBe(0);
    expect(server.requests).toHaveLength(3);
    const result = JSON.parse(r.stdout) as { usage: Record<string, unknown> };
    expect(result.usage).toMatchObject({ requests: 1, input_tokens: 5000, cached_tokens: 4096, output_tokens: 20, effective_input_tokens: 904 + 410 });
  });

  test("chat -p json and --json: a stream cut in step 2 keeps step 1's usage, adds nothing for the cut one", async () => {
    server.enqueue(readCall(), cutAfter(textStream("The answer is forty two, as computed."), 7));
    const r = await chat(["-p", "read it", "--output-format", "json"], { cwd: root, server });
    expect(r.code).toBe(1);
    const result = JSON.parse(r.stdout) as { usage: Record<string, unknown>; error: { kind: string }; num_turns: number };
    expect(result.error.kind).toBe("stream_cut");
    expect(result.num_turns).toBe(2);
    expect(result.usage).toMatchObject({ requests: 1, input_tokens: 4000, cached_tokens: 3072, output_tokens: 25 });
    expect(Value.Check(HeadlessResultSchema, result)).toBe(true);

    server.enqueue(readCall(), cutAfter(textStream("The answer is forty two, as computed."), 7));
    const s = await chat(["--continue", "-p", "again", "--json"], { cwd: root, server });
    const usage = jsonEvents(s.stdout).filter((e) => e.type === "usage");
    expect(usage.map((e) => e.usage)).toEqual([{ input: 4000, cached: 3072, output: 25, reasoning: 0 }]);
  });

  test("an abort mid-stream in step 2: /cost has step 1 only; the transcript's turn_end agrees", async () => {
    const { response, gate } = gatedBefore(textStream("partial answer that never ends"), "response.output_text.done");
    server.enqueue(readCall(), response);
    const { session } = await openAgent(root, server);
    const abort = new AbortController();
    let step2 = false;
    const turn = await runTurn(session, "read it", {
      signal: abort.signal,
      onEvent: (e) => {
        if (e.type === "tool_call_end") step2 = true;
        else if (e.type === "text_delta" && step2) abort.abort();
      },
    });
    gate.release();
    expect(turn.stopReason).toBe("aborted");
    expect(session.cost.figures()).toMatchObject({ requests: 1, ...step1 });
    expect(recordsOf(session, "turn_end").at(-1)?.usage).toEqual({ ...step1, reasoning: 0 });
    await session.close();
  });

  test("context overflow in the stream, folded and retried: counted once (the retry's usage)", async () => {
    const { session } = await openAgent(root, server);
    server.enqueue(answer("one", { input: 100, cached: 0, output: 1 }), answer("two", { input: 200, cached: 0, output: 2 }));
    await runTurn(session, "first");
    await runTurn(session, "second");
    server.enqueue({ kind: "stream", body: buildFailedStreamBody(), label: "overflow" }, answer("fits now", { input: 300, cached: 128, output: 3 }));
    const turn = await runTurn(session, "third");
    expect(turn.stopReason).toBe("completed");
    expect(session.cost.figures()).toMatchObject({ requests: 3, foldRequests: 0, ...sum(reported) });
    await session.close();
  });
});

function buildFailedStreamBody(): string {
  return failedStream("context_length_exceeded", "Your input exceeds the context window of this model.").body;
}

describe("resumed sessions (--continue, /resume)", () => {
  test("chat --continue -p json: each run reports its own requests; nothing from the earlier run is repeated", async () => {
    server.enqueue(answer("a", { input: 1000, cached: 0, output: 10 }));
    const first = await chat(["-p", "one", "--output-format", "json"], { cwd: root, server });
    server.enqueue(answer("b", { input: 2000, cached: 1024, output: 20 }));
    const second = await chat(["--continue", "-p", "two", "--output-format", "json"], { cwd: root, server });
    const [a, b] = [first, second].map((r) => JSON.parse(r.stdout) as { session_id: string; usage: Record<string, number> });
    expect(b?.session_id).toBe(a?.session_id ?? "");
    expect(a?.usage).toMatchObject({ requests: 1, input_tokens: 1000 });
    expect(b?.usage).toMatchObject({ requests: 1, input_tokens: 2000, cached_tokens: 1024 });
  });

  test("the REPL resumed with --continue: figures count from the resume, and /cost says so (no false 'no model call in this session')", async () => {
    server.enqueue(answer("a", { input: 1000, cached: 0, output: 10 }), answer("b", { input: 1500, cached: 1024, output: 10 }));
    const before = await controllerFor();
    await drain(before.submit("one", new AbortController().signal));
    await drain(before.submit("two", new AbortController().signal));
    await before.close();
    const after = await controllerFor({}, { kind: "latest" });
    // Figures restart at 0 on resume (no double counting either way)...
    expect(after.status().cost?.requests).toBe(0);
    // ...and /cost says whose figures they are (same session id, 2 paid calls before).
    const cost = await after.runCommand("cost", "");
    expect(cost.lines.join("\n")).not.toContain("in this session");
    expect(cost.lines.join("\n")).toContain("since this session was resumed (earlier runs are not counted)");
    await after.close();
  });
});

describe("usage objects from the server", () => {
  test("missing fields, zero input, negatives, strings and cached > input become safe counts", async () => {
    const { session } = await openAgent(root, server);
    const cases: unknown[] = [
      { input_tokens: 0, output_tokens: 0 },
      { input_tokens: 1000 },
      { input_tokens: -5, input_tokens_details: { cached_tokens: "NaN" }, output_tokens: "12" },
      { input_tokens: 100, input_tokens_details: { cached_tokens: 400 }, output_tokens: 7 },
      { input_tokens: "1e9", output_tokens: null, output_tokens_details: "x" },
    ];
    for (const usage of cases) {
      server.enqueue(rawUsageStream("hi", usage));
      expect((await runTurn(session, "q")).stopReason).toBe("completed");
    }
    const f = session.cost.figures();
    expect(f).toMatchObject({ requests: 5, input: 1100, cached: 100, output: 7 });
    expect(costLines(f, { input: 1, output: 1 }).join("\n")).not.toMatch(/NaN|Infinity|-\d/);
    await session.close();
  });

  test("/cost after calls whose usage the server left out says no usage was reported, not that no call was made", async () => {
    const controller = await controllerFor();
    server.enqueue(rawUsageStream("hi", null));
    await drain(controller.submit("q", new AbortController().signal));
    expect(server.requests).toHaveLength(1);
    const cost = await controller.runCommand("cost", "");
    expect(cost.lines.join("\n")).toContain("no model call has reported its usage yet in this session (a server that never sends usage shows none)");
    await controller.close();
  });

  test("fractional token counts (12.5) are rounded: the turn completes, its turn_end is written", async () => {
    const { session } = await openAgent(root, server);
    server.enqueue(rawUsageStream("hi", { input_tokens: 12.5, input_tokens_details: { cached_tokens: 4.2 }, output_tokens: 3.7 }));
    const turn = await runTurn(session, "q");
    expect(turn.events.filter((e) => e.type === "error")).toEqual([]);
    expect(turn.stopReason).toBe("completed");
    expect(Number.isInteger(session.cost.figures().input)).toBe(true);
    await session.close();
  });

  test("a fold request answered with fractional counts is counted, and its summary used", async () => {
    let folds = 0;
    server.setResponder((body) => {
      if (!isFoldRequest(body)) return textStream(`${lastUserText(body)}: ${"the app is fine. ".repeat(1200)}`);
      folds += 1;
      return rawUsageStream("- earlier: long answers", { input_tokens: 3000.5, output_tokens: 12 });
    });
    const { session } = await openAgent(root, server, { settings: { windowBlockTurns: 1, windowAnswerTokens: 0 } });
    for (let n = 1; n <= 6; n++) await runTurn(session, `question ${n}`);
    expect(folds).toBeGreaterThanOrEqual(1);
    expect(session.cost.figures().foldRequests).toBe(folds);
    await session.close();
  }, 20_000);

  test("a huge count (1e308) is no count: total_cost_usd stays a number", async () => {
    server.enqueue(rawUsageStream("hi", { input_tokens: 1e308, output_tokens: 10 }));
    const r = await chat(["-p", "hi", "--output-format", "json"], { cwd: root, server, env: { XDG_CONFIG_HOME: await userConfig({ prices: { input: 2, output: 8 } }) } });
    expect(r.code).toBe(0);
    expect((JSON.parse(r.stdout) as { total_cost_usd: unknown }).total_cost_usd).not.toBeNull();
  });

  test("two huge counts never sum to Infinity: the turn completes and the result keeps its schema", async () => {
    const huge = { input_tokens: 1e308, output_tokens: 1, cached_tokens: 0, reasoning_tokens: 0 };
    server.enqueue(toolCallStream([{ name: "read_file", arguments: { path: "README.md" } }], { usage: huge }), rawUsageStream("hi", { input_tokens: 1e308, output_tokens: 10 }));
    const r = await chat(["-p", "hi", "--output-format", "json"], { cwd: root, server });
    const result = JSON.parse(r.stdout) as unknown;
    expect([...Value.Errors(HeadlessResultSchema, result)].map((e) => `${e.path} ${e.message}`)).toEqual([]);
    expect(r.code).toBe(0);
  });
});

describe("prices", () => {
  test("a wrong type names the file and the field, exit 2, no stack", async () => {
    const cases: Array<[unknown, string]> = [
      ["cheap", "/prices Expected object"],
      [{ input: "2", output: 8 }, "/prices/input Expected number"],
      [{ input: 2 }, "/prices/output"],
      [{ input: 2, output: 8, cached: 0.2 }, "/prices/cached Unexpected property"],
      [{ input: 2, output: 8, cachedInput: -1 }, "/prices/cachedInput"],
    ];
    for (const [prices, field] of cases) {
      const xdg = await userConfig({ prices });
      const r = await chat(["-p", "hi"], { cwd: root, server, env: { XDG_CONFIG_HOME: xdg } });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`${join(xdg, "valarmind", "config.json")}: ${field}`);
      expect(r.stderr).not.toContain("    at ");
    }
    expect(server.requests).toHaveLength(0);
  }, 20_000);

  test("the estimate: /cost, the status figures and json total_cost_usd agree with hand arithmetic on the server's usage, folds included", async () => {
    foldingResponder();
    const prices = { input: 1.25, cachedInput: 0.125, output: 10 };
    const controller = await controllerFor({ windowBlockTurns: 1, windowAnswerTokens: 0, prices });
    for (let n = 1; n <= 6; n++) await drain(controller.submit(`question ${n}`, new AbortController().signal));
    expect(reported.some((r) => r.fold)).toBe(true);
    const t = sum(reported);
    const usd = ((t.input - t.cached) * 1.25 + t.cached * 0.125 + t.output * 10) / 1e6;
    expect(controller.status().cost?.usd).toBeCloseTo(usd, 12);
    const cost = await controller.runCommand("cost", "");
    expect(cost.lines.at(-1)).toBe(`estimate: $${usd.toFixed(4)} at $1.25/M input, $0.125/M cached, $10/M output (settings "prices")`);
    await controller.close();

    // chat -p json: the same arithmetic over a two-step run.
    reported = [];
    server.setResponder(undefined);
    server.enqueue(
      toolCallStream([{ name: "read_file", arguments: { path: "README.md" } }], { usage: { input_tokens: 4000, cached_tokens: 3072, output_tokens: 25, reasoning_tokens: 0 } }),
      answer("done", { input: 4200, cached: 4096, output: 30 }),
    );
    const r = await chat(["-p", "read it", "--output-format", "json"], { cwd: root, server, env: { XDG_CONFIG_HOME: await userConfig({ prices }) } });
    const json = JSON.parse(r.stdout) as { total_cost_usd: number };
    expect(json.total_cost_usd).toBeCloseTo(((8200 - 7168) * 1.25 + 7168 * 0.125 + 55 * 10) / 1e6, 12);
  }, 20_000);

  test("/cost prints the default cached price as written ($0.04/M for input 0.4, not $0.04000000000000001/M)", async () => {
    const controller = await controllerFor({ prices: { input: 0.4, output: 1.6 } });
    server.enqueue(answer("hi", { input: 1000, cached: 0, output: 10 }));
    await drain(controller.submit("q", new AbortController().signal));
    const cost = await controller.runCommand("cost", "");
    expect(cost.lines.at(-1)).toContain("$0.04/M cached");
    await controller.close();
  });

  test("modelPrices: each request is priced at the prices of the model it used, /model included; a model without an entry falls back to prices", async () => {
    const controller = await controllerFor({ model: "gpt-a", prices: { input: 1, output: 1 }, modelPrices: { "gpt-a": { input: 2, output: 8 }, "gpt-b": { input: 0.5, output: 2 } } });
    const ask = async () => {
      server.enqueue(answer("hi", { input: 1_000_000, cached: 0, output: 0 }));
      await drain(controller.submit("q", new AbortController().signal));
    };
    await ask();
    expect(controller.status().cost?.usd).toBeCloseTo(2, 10);
    await controller.runCommand("model", "gpt-b");
    // The request already made keeps its price; the next one is priced as gpt-b.
    expect(controller.status().cost?.usd).toBeCloseTo(2, 10);
    await ask();
    expect(controller.status().cost?.usd).toBeCloseTo(2.5, 10);
    expect((await controller.runCommand("cost", "")).lines.at(-1)).toContain("at $0.5/M input");
    await controller.runCommand("model", "gpt-c");
    await ask();
    expect(controller.status().cost?.usd).toBeCloseTo(3.5, 10);
    await controller.close();
  });

  test("the status line shows a $0.0042 session as $0.0042, not rounded to cents", async () => {
    const controller = await controllerFor({ prices: { input: 1.25, output: 10 } });
    server.enqueue(answer("hi", { input: 2000, cached: 0, output: 170 }));
    await drain(controller.submit("q", new AbortController().signal));
    expect(controller.status().cost?.usd).toBeCloseTo(0.0042, 10);
    expect(statusFields(controller.status()).effective).toContain("$0.0042");
    await controller.close();
  });
});
