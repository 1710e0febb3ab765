/**
 * Audit of the window FOLD under failures a real user meets (ADR 0074, model-summarizer.ts,
 * fold-step.ts): Ctrl-C while the fold request streams, SIGKILL mid-fold then `--continue`, a fold
 * answer cut by the server's output limit, retries, a promotion while the user's state.json is
 * mid-edit, a promotion flood, and many offline folds of non-ASCII text against the 1500-token cap.
 * Complements fold-hostile-model.test.ts (huge / empty / injected / tool-call answers), which it
 * does not repeat. Written as a fault-finding pass; the comments marked "Was" say what each fixed
 * defect did.
 *
 * With shortBufferTurns 4 and windowBlockTurns 2 the window is full after turn 4: its settle step
 * folds turns 1–2 through one fold request riding turn 4's cache.
 */
import { afterAll, afterEach, beforeEach, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { AgentEvent } from "../../src/agent/events.ts";
import type { AgentSession } from "../../src/agent/session.ts";
import { ModelSummarizer } from "../../src/agent/model-summarizer.ts";
import { SUMMARY_CAP_TOKENS } from "../../src/memory/summary.ts";
import { createOpenAIClient } from "../../src/model/openai-client.ts";
import { exactCounter } from "../../src/prompt/builder.ts";
import * as ops from "../../src/state/ops.ts";
import { cleanupTempDirs } from "../support/cli.ts";
import {
  createGate,
  gatedAfter,
  httpError,
  inputItems,
  isDataMessage,
  lastUserText,
  startFakeResponsesServer,
  textStream,
  type FakeResponse,
  type FakeResponsesServer,
  type RecordedRequest,
} from "../support/fake-responses-server.ts";
import { makeGitWorkspace, openAgent, records, recordsOf, runTurn, testSettings, type TurnResult } from "./support/agent-harness.ts";
import { chat, latestRecords, spawnChat } from "./support/cli-chat.ts";
import { isFoldRequest } from "./support/cost-model.ts";

const SETTINGS = { shortBufferTurns: 4, windowBlockTurns: 2, maxContextTokens: 8000 };
const count = await exactCounter();

let server: FakeResponsesServer;
beforeEach(() => {
  server = startFakeResponsesServer();
});
afterEach(async () => {
  await server.close();
});
afterAll(cleanupTempDirs);

/** Turn requests answered "answer to …"; the n-th fold request (0-based) by `fold(n)`. */
function respond(fold: (n: number, body: Record<string, unknown>) => FakeResponse): void {
  let folds = 0;
  server.setResponder((body) => (isFoldRequest(body) ? fold(folds++, body) : textStream(`answer to ${lastUserText(body)}`)));
}

async function turns(session: AgentSession, from: number, to: number, text = (n: number) => `message ${n}`): Promise<TurnResult[]> {
  const out: TurnResult[] = [];
  for (let n = from; n <= to; n++) out.push(await runTurn(session, text(n)));
  return out;
}

const notices = (events: readonly AgentEvent[]) => events.flatMap((e) => (e.type === "notice" ? [e.message] : []));
const turnRequests = () => server.requests.filter((r) => !isFoldRequest(r.body));
const ownUserMessages = (r: RecordedRequest | undefined) =>
  inputItems(r?.body ?? {}).flatMap((i) => (i.type === "message" && i.role === "user" && !isDataMessage(i) ? [i.content ?? ""] : []));
const dataText = (r: RecordedRequest | undefined) => inputItems(r?.body ?? {}).filter(isDataMessage).map((i) => i.content ?? "").join("\n");
const userRecords = (s: AgentSession) => records(s).flatMap((r) => (r.kind === "user" ? [r.text] : []));
const upTo = (n: number) => Array.from({ length: n }, (_, i) => `message ${i + 1}`);

describe("Ctrl-C while the fold request streams", () => {
  /** Turns 1–3, then turn 4 whose settle-step fold request is cut by the user's abort halfway. */
  async function abortedFold(): Promise<{ root: string; session: AgentSession; turn4: TurnResult }> {
    const abort = new AbortController();
    respond((n) => {
      if (n > 0) return textStream(`SUMMARY-${n}: earlier messages.`);
      const { response, gate } = gatedAfter(textStream("PARTIAL fold answer that never finishes"), 5, createGate());
      void gate.reached.then(() => abort.abort());
      return response;
    });
    const root = await makeGitWorkspace();
    const { session } = await openAgent(root, server, { settings: SETTINGS });
    await turns(session, 1, 3);
    const turn4 = await runTurn(session, "message 4", { signal: abort.signal });
    return { root, session, turn4 };
  }

  test("nothing is folded or lost; the next turn folds; a resumed session rebuilds the same window once", async () => {
    const { root, session, turn4 } = await abortedFold();
    expect(turn4.stopReason).toBe("completed");
    expect(turn4.types).not.toContain("window_slid");
    expect(recordsOf(session, "summary")).toEqual([]);
    expect(records(session).some((r) => r.kind === "summary" && r.text.includes("PARTIAL"))).toBe(false);
    // Turn 5 carries all four earlier turns verbatim (none half-folded), then its settle folds 1–3.
    const turn5 = await runTurn(session, "message 5");
    expect(ownUserMessages(turnRequests()[4])).toEqual(upTo(5));
    expect(turn5.types).toContain("window_slid");
    expect(recordsOf(session, "summary").map((r) => [r.from_turn, r.through_turn, r.summarizer])).toEqual([[1, 3, "model"]]);
    await session.close();
    // --continue: the summary of 1–3 and turns 4–5 verbatim, every message stored once.
    const again = await openAgent(root, server, { settings: SETTINGS, resume: { kind: "latest" } });
    await runTurn(again.session, "message 6");
    const next = turnRequests()[5];
    expect(ownUserMessages(next)).toEqual(["message 4", "message 5", "message 6"]);
    expect(dataText(next)).toContain("SUMMARY-1: earlier messages.\n(turns 1–3)");
    expect(userRecords(again.session)).toEqual(upTo(6));
  });

  // Was (src/agent/model-summarizer.ts `send` → `fallBack`, with src/agent/fold-step.ts
  // `foldWindowIfDue` and src/agent/session.ts `settle`): the client turns the abort into an
  // `error` event, so `send` takes it for a failed model call, calls onFallback ("…folded turns
  // 1–2 with the offline summarizer instead") and only then does the extractive summarizer throw
  // AbortError. The settle step ends with an `error` event of kind "internal" ("The operation was
  // aborted") and the false fallback notice waits in pendingNotices to be shown with turn 5,
  // although nothing was folded.
  test("an aborted fold is not reported as an internal error nor as an offline fold that never happened", async () => {
    const { session, turn4 } = await abortedFold();
    const turn5 = await runTurn(session, "message 5");
    expect({
      internalErrors: turn4.events.flatMap((e) => (e.type === "error" && e.kind === "internal" ? [e.message] : [])),
      falseFallbackNotices: notices([...turn4.events, ...turn5.events]).filter((m) => m.includes("folded turns 1–2 with the offline summarizer")),
    }).toEqual({ internalErrors: [], falseFallbackNotices: [] });
  });

  // Was (src/agent/session.ts `submit` → `run`): a turn submitted before the last one settled
  // (the documented API path: "a turn submitted before that settles first") runs the deferred fold
  // BEFORE `runTurn` records the user's message. Ctrl-C during that fold rejects `run`: the message
  // is never written (contrary to "the user's message first, so nothing typed is ever lost"), and the
  // stream ends with an internal error and `turn_end {turn: 4, stopReason: "error"}` — the previous
  // turn's number, not "aborted". (The bundled REPL and chat -p always settle, so they do not hit it.)
  // Fix: record the user's message (openTurn's first append) before the deferred settle, or run the
  // deferred settle offline when aborted; end an aborted run with stopReason "aborted".
  test("Ctrl-C during the deferred fold of an unsettled session keeps the new message", async () => {
    const abort = new AbortController();
    respond(() => {
      const { response, gate } = gatedAfter(textStream("PARTIAL"), 4, createGate());
      void gate.reached.then(() => abort.abort());
      return response;
    });
    const root = await makeGitWorkspace();
    const { session } = await openAgent(root, server, { settings: SETTINGS });
    await turns(session, 1, 3);
    for await (const event of session.submit("message 4", new AbortController().signal)) void event; // no settle step
    const events: AgentEvent[] = [];
    for await (const event of session.submit("message 5", abort.signal)) events.push(event);
    expect({ stored: userRecords(session), end: events.at(-1) }).toMatchObject({ stored: upTo(5), end: { type: "turn_end", turn: 5, stopReason: "aborted" } });
  });
});

describe("SIGKILL in the middle of a fold, then --continue", () => {
  test("no turn lost or duplicated, one summary, the same session (no fork)", async () => {
    respond(() => textStream("SUMMARY-AFTER-KILL: messages 1 to 20."));
    const root = await makeGitWorkspace();
    // Turns 1–19 in-process at the defaults the CLI uses (window of 20, 1 kept): no fold yet.
    const first = await openAgent(root, server);
    await turns(first.session, 1, 19);
    expect(recordsOf(first.session, "summary")).toEqual([]);
    await first.session.close();
    // Turn 20 in a real process: its answer is written, the fold request (turns 1–19) is in flight when the process is killed.
    const gate = createGate();
    let foldSeen = 0;
    respond(() => (foldSeen++ === 0 ? gatedAfter(textStream("NEVER-STORED partial summary"), 4, gate).response : textStream("SUMMARY-AFTER-KILL: messages 1 to 20.")));
    const child = spawnChat(["--continue", "-p", "message 20", "--json"], { cwd: root, server });
    await gate.reached;
    child.kill("SIGKILL");
    await child.exited;
    gate.release();
    const killed = latestRecords(root);
    expect(killed.filter((r) => r.kind === "turn_end").map((r) => r.turn)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(killed.filter((r) => r.kind === "summary")).toEqual([]);

    const after = await chat(["--continue", "-p", "message 21"], { cwd: root, server });
    expect(after.code).toBe(0);
    expect(after.stdout).toBe("answer to message 21\n");
    const list = latestRecords(root);
    expect(list.flatMap((r) => (r.kind === "user" ? [r.text] : []))).toEqual(upTo(21));
    expect(list.filter((r) => r.kind === "summary").map((r) => r.kind === "summary" && [r.from_turn, r.through_turn, r.summarizer, r.text])).toEqual([
      [1, 20, "model", "SUMMARY-AFTER-KILL: messages 1 to 20."],
    ]);
    // Turn 21 was sent with the whole unfolded window (nothing half-applied), and no new session was forked.
    expect(ownUserMessages(turnRequests().at(-1))).toEqual(upTo(21));
    expect(readdirSync(`${root}/.valarmind/sessions`).filter((f) => f.endsWith(".jsonl"))).toHaveLength(1);
  }, 20_000);
});

describe("fold answers the transport delivers badly", () => {
  test("HTTP 429 then 500 on the fold request: retried, then the model's summary is used; no error reaches the user", async () => {
    let tries = 0;
    respond(() => {
      tries++;
      if (tries === 1) return httpError(429, { message: "slow down", type: "rate_limit_error", code: "rate_limit_exceeded" }, { "retry-after-ms": "10" });
      if (tries === 2) return httpError(500, { message: "boom", type: "server_error" });
      return textStream("SUMMARY-AFTER-RETRIES: messages 1 and 2.");
    });
    const root = await makeGitWorkspace();
    const { session } = await openAgent(root, server, { settings: SETTINGS });
    const results = await turns(session, 1, 5);
    expect(results.flatMap((r) => r.events.filter((e) => e.type === "error"))).toEqual([]);
    expect(notices(results[3]?.events ?? [])).toEqual([]);
    expect(recordsOf(session, "summary").map((r) => [r.through_turn, r.summarizer, r.text])).toEqual([[2, "model", "SUMMARY-AFTER-RETRIES: messages 1 and 2."]]);
    expect(dataText(turnRequests()[4])).toContain("SUMMARY-AFTER-RETRIES");
    // Fold usage is counted once (the successful attempt), as a fold.
    expect(results[3]?.events.filter((e) => e.type === "usage" && e.purpose === "fold")).toHaveLength(1);
  });

  // Was (src/agent/model-summarizer.ts `send`): a `completed` event with status "incomplete"
  // (response.incomplete, e.g. max_output_tokens of a local server, or content_filter) is taken as
  // a finished summary. The model writes the current summary first and the folded turns' lines
  // after it, so a cut answer loses exactly the newest lines — and those turns have left the
  // window: their content is gone for good, silently (summarizer "model", no notice). Fix: treat
  // status "incomplete" like a failure (fold offline, with the notice), or at least say so.
  test("a fold answer cut by the output limit (response.incomplete) is not stored as the summary", async () => {
    respond(() => textStream("T1: the user sent message 1.\nT2: the user se", { status: "incomplete", incompleteReason: "max_output_tokens" }));
    const root = await makeGitWorkspace();
    const { session } = await openAgent(root, server, { settings: SETTINGS });
    const results = await turns(session, 1, 5);
    const stored = recordsOf(session, "summary")[0];
    expect(stored?.text).not.toBe("T1: the user sent message 1.\nT2: the user se");
    expect(notices(results[3]?.events ?? []).join("\n")).toMatch(/incomplete|output limit|max_output_tokens/);
  });
});

// Note (not a defect here): the fold request uses the turn client's timeouts. A server that accepts
// the connection and never answers is retried like a turn request ("no response" is transient):
// 4 attempts × idleTimeoutMs (300 s by default) ≈ 20 minutes in which the settle step held the
// REPL (busy) and kept `chat -p` from exiting after it printed the answer; the fold's own deadline
// (FOLD_DEADLINE_MS, 2 minutes, next test) now ends that sooner. Here with 150 ms.
test("a fold server that never answers: given up after the idle timeout (4 attempts), folded offline, the turns go on", async () => {
  let foldTries = 0;
  server.setResponder((body) => (isFoldRequest(body) ? (foldTries++, new Promise<FakeResponse>(() => {})) : textStream(`answer to ${lastUserText(body)}`)));
  const root = await makeGitWorkspace();
  const model = createOpenAIClient({ apiKey: "sk-test", baseURL: server.baseURL, idleTimeoutMs: 150, sleep: async () => {} });
  const { session } = await openAgent(root, server, { settings: SETTINGS, model });
  const results = await turns(session, 1, 5);
  expect(foldTries).toBe(4);
  expect(notices(results[3]?.events ?? [])).toEqual([expect.stringMatching(/^the summary request failed \(.*no response for.*folded turns 1–2 with the offline summarizer instead$/)]);
  expect(results.map((r) => r.stopReason)).toEqual(results.map(() => "completed"));
  expect(recordsOf(session, "summary").map((r) => r.summarizer)).toEqual(["extractive"]);
});

// Was: a fold server that keeps the stream open but stalls mid-answer (events, then nothing, under
// the idle timeout) held the settle step, and with it the next message, for as long as it stalled.
test("a fold request that stalls mid-answer is given up at its deadline: the offline summarizer folds, the partial answer is not kept", async () => {
  const { response, gate } = gatedAfter(textStream("PARTIAL summary words that never end"), 4);
  server.enqueue(response);
  const root = await makeGitWorkspace();
  const fallbacks: string[] = [];
  const summarizer = new ModelSummarizer({
    model: createOpenAIClient({ apiKey: "sk-test", baseURL: server.baseURL, sleep: async () => {} }),
    settings: testSettings(),
    sessionId: "s-deadline",
    sessionDir: join(root, ".valarmind/sessions/s-deadline"),
    currentTurn: () => 3,
    currentSummary: () => undefined,
    readState: async () => undefined,
    promote: async () => {},
    onFallback: (message) => fallbacks.push(message),
    deadlineMs: 300,
  });
  const turnsToFold = [1, 2].map((n) => ({ turn: n, user: `message ${n}`, items: [{ kind: "assistant" as const, text: `answer to message ${n}` }] }));
  const started = performance.now();
  const text = await summarizer.summarize("", turnsToFold);
  expect(performance.now() - started).toBeLessThan(5_000);
  expect(fallbacks).toEqual([expect.stringMatching(/^the summary request failed \(no summary within 300ms\); folded turns 1–2 with the offline summarizer instead$/)]);
  expect(text).not.toContain("PARTIAL");
  expect(text).toContain("T1 user: message 1");
  gate.release();
});

describe("promotions and the user's state.json", () => {
  const promoting = (n: number) => textStream(`SUMMARY ${n}: the user sent messages.\n<promote>\ntask Promoted task ${n}\ndone T-1\n</promote>`);

  test("many folds: user-written goal, conventions, decisions and tasks survive every promotion; promotions are applied once", async () => {
    respond((n) => promoting(n));
    const root = await makeGitWorkspace();
    const { session } = await openAgent(root, server, { settings: SETTINGS });
    await session.state.update((s) => ops.addTask(ops.setGoal(s, "USER GOAL").state, "User task one"));
    for (let n = 1; n <= 12; n++) {
      await runTurn(session, `message ${n}`);
      // The user keeps editing between folds (another terminal: valarmind state …).
      if (n % 3 === 0) await session.state.update((s) => ops.setConvention(s, `rule${n}`, `value ${n}`));
      if (n === 7) await session.state.update((s) => ops.addDecision(s, "User decision", "typed by the user"));
    }
    const state = (await session.state.read()).state;
    expect(state.goal).toBe("USER GOAL");
    expect(Object.keys(state.conventions)).toEqual(["rule3", "rule6", "rule9", "rule12"]);
    expect(state.decisions_recent.map((d) => d.title)).toEqual(["User decision"]);
    expect(state.tasks_open[0]).toMatchObject({ id: "T-1", title: "User task one", status: "done" });
    const folds = recordsOf(session, "summary");
    expect(folds.length).toBeGreaterThanOrEqual(4);
    expect(state.tasks_open.slice(1).map((t) => t.title)).toEqual(folds.map((_, n) => `Promoted task ${n}`));
    // Every summary record starts at turn 1 and continues where the last one ended.
    expect(folds.every((f) => f.from_turn === 1)).toBe(true);
    expect(new Set(folds.map((f) => f.through_turn)).size).toBe(folds.length);
  });

  // Was (src/memory/promotion.ts `applyPromotions`): the user is editing state.json (for a
  // moment it is invalid: a trailing comma). The turn's read says "It was left as it is". Then a fold
  // answer's `<promote>` goes through `store.update`, which moves the user's file aside as
  // state.json.corrupt-<time> and writes a fresh state holding only the promoted task: the user's
  // goal and tasks leave the prompt, the model's `done T-1` (meant for the user's T-1) completes the
  // task just promoted as T-1, and `result.notices` (where the file went) is dropped — the user is
  // told only "promoted to the working state: …". Fix: skip promotions, with a notice, when
  // `store.read()` reports `source: "invalid"`; in any case pass `result.notices` on.
  test("a fold promotion does not move the user's half-edited state.json aside", async () => {
    respond(() => promoting(0));
    const root = await makeGitWorkspace();
    const { session } = await openAgent(root, server, { settings: SETTINGS });
    await session.state.update((s) => ops.addTask(ops.setGoal(s, "USER GOAL").state, "User task one"));
    await turns(session, 1, 3);
    const file = session.paths.stateJson;
    const halfEdited = readFileSync(file, "utf8").replace(/\n}\s*$/, ",\n}\n");
    writeFileSync(file, halfEdited);
    const turn4 = await runTurn(session, "message 4");
    expect(turn4.types).toContain("window_slid");
    const movedAside = readdirSync(session.paths.memoryDir).filter((f) => f.includes(".corrupt-"));
    // Either the file is left for the user to finish, or the user is told where it went.
    const toldWhere = notices(turn4.events).some((m) => m.includes("It was kept as"));
    const outcome = movedAside.length === 0 ? (readFileSync(file, "utf8") === halfEdited ? "left in place" : "rewritten") : toldWhere ? "moved aside, user told" : `moved aside silently as ${movedAside[0]}`;
    expect(outcome).toMatch(/^(left in place|moved aside, user told)$/);
  });

  // Was (src/memory/promotion.ts `parsePromotions`/`applyPromotions`): nothing bounds
  // how many promotions one fold answer applies. A hostile or runaway answer promoting 80 tasks
  // adds 80 tasks to state.json, and since the state projection keeps the most recent open tasks
  // within its 750-token cap, the user's own open task no longer reaches the prompt. Fix: cap the
  // promotions per fold (e.g. 5 tasks, 3 decisions) and report the rest as dropped.
  test("a promotion flood does not push the user's own open task out of the prompt", async () => {
    const flood = Array.from({ length: 80 }, (_, i) => `task Flood task number ${i} with a fairly long descriptive title`).join("\n");
    respond(() => textStream(`SUMMARY: messages.\n<promote>\n${flood}\n</promote>`));
    const root = await makeGitWorkspace();
    const { session } = await openAgent(root, server, { settings: SETTINGS });
    await session.state.update((s) => ops.addTask(s, "USER-OWN-TASK keep me visible"));
    await turns(session, 1, 5);
    expect((await session.state.read()).state.tasks_open[0]?.title).toBe("USER-OWN-TASK keep me visible");
    expect(dataText(turnRequests()[4]).includes("USER-OWN-TASK keep me visible")).toBe(true);
  });
});

describe("the summary's 1500-token cap over many folds", () => {
  /** 24 turns; each fold answer is the previous summary (copied, as the rules ask) plus ~245 new tokens, never rewritten. */
  async function appendingSession(): Promise<{ results: TurnResult[]; folds: Array<{ text: string }> }> {
    respond((n, body) => {
      const previous = /<conversation_summary[^>]*>\n([\s\S]*?)\n\(turns \d+–\d+\)\n<\/conversation_summary>/.exec(dataText({ body } as RecordedRequest))?.[1] ?? "";
      return textStream(`${previous}\n${`FOLD-${n} ${"detail words ".repeat(120)}`}`.trim());
    });
    const root = await makeGitWorkspace();
    const { session } = await openAgent(root, server, { settings: SETTINGS });
    const results = await turns(session, 1, 24);
    return { results, folds: recordsOf(session, "summary") };
  }

  test("a model that only appends: every stored summary stays within the cap and keeps the newest lines", async () => {
    const { folds } = await appendingSession();
    expect(folds.length).toBeGreaterThanOrEqual(10);
    for (const fold of folds) expect(count(fold.text)).toBeLessThanOrEqual(SUMMARY_CAP_TOKENS);
    expect(folds.at(-1)?.text).toContain(`FOLD-${folds.length - 1} `);
  }, 20_000);

  // Was (src/agent/model-summarizer.ts `send`): an answer over the cap is cut head+tail to the
  // cap itself (1500), not to SUMMARY_REWRITE_TOKENS (750). ADR 0074 decision 3 promises hysteresis
  // ("rewritten … to at most 750 … so it happens every few folds, not at every fold once the cap is
  // reached; the offline summarizer does the same"). With a model that keeps appending, the stored
  // summary sits at ~1470–1500 tokens from the 6th fold on and EVERY later fold is cut again: a
  // prefix break inside the summary and an "over its cap" notice at every fold (here 5 in a row),
  // the hidden cost the ADR measured. Fix: when tokens > cap, shortenHeadTail(summary, min(cap,
  // SUMMARY_REWRITE_TOKENS), count).
  test("once cut at the cap, the next folds append again (hysteresis): no cut at consecutive folds", async () => {
    const { results } = await appendingSession();
    const cutAt = results.flatMap((r, i) => (notices(r.events).some((m) => m.includes("over its cap")) ? [i + 1] : []));
    expect(cutAt.length).toBeGreaterThan(0);
    expect(cutAt.filter((turn, i) => turn - (cutAt[i - 1] ?? -99) <= 2)).toEqual([]);
  }, 20_000);

  // Was (src/memory/summary.ts `ExtractiveSummarizer`, used by model-summarizer.ts `fallBack`):
  // the offline summarizer's cap is 6000 *characters* ("~4 per token"), and the fallback's result
  // is never measured in tokens. For text that is not English prose — CJK, hashes, paths with
  // hex — a character is ~0.65 token, so a session whose fold requests fail (a local server with no
  // summary support, an outage) stores summaries of ~3,900 tokens: 2.6× the 1500-token cap the
  // rules, the cost model (fold-economics.ts) and the budget assume. Fix: condense by counted
  // tokens (pass `count` to the extractive summarizer), or cap the fallback's text with
  // shortenHeadTail(text, cap) as `send` does for the model's.
  test("offline fallback folds of CJK turns stay within the 1500-token cap", async () => {
    respond(() => httpError(400, { message: "no summaries here", code: "unsupported" }));
    const line = "缓存失效的时候请检查配置文件中的超时参数并且记录下来以便下次会话继续处理这个问题，同时确认日志轮转策略和磁盘配额没有被错误地修改过，否则服务会在高峰期间反复重启并且丢失请求";
    const cjk = (n: number) => `第${n}轮：${line}${line}`;
    const root = await makeGitWorkspace();
    const { session } = await openAgent(root, server, { settings: { shortBufferTurns: 20, windowBlockTurns: 5, maxContextTokens: 32_000 } });
    await turns(session, 1, 20, cjk);
    const folds = recordsOf(session, "summary");
    expect(folds.every((f) => f.summarizer === "extractive")).toBe(true);
    expect(Math.max(...folds.map((f) => count(f.text)))).toBeLessThanOrEqual(SUMMARY_CAP_TOKENS);
  }, 20_000);
});
