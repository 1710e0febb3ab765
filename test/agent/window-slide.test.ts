/**
 * The window folds (ADR 0074): with SHORT_BUFFER_TURNS = 20 and 4 turns kept, small turns never
 * cost enough to fold early, so the 20th turn fills the window and folds all but the last 4
 * (turns 1–16) into the rolling summary; later requests carry the summary instead of those turns.
 * Large turns cost more to keep than to fold, so they fold before the window is full ("cost").
 * Once with the offline summarizer (fast), once with the model summarizer answered by the fake
 * server (its fold request rides the turn requests' cache), once with that request failing.
 */
import { afterAll, afterEach, beforeEach, describe, expect, test } from "bun:test";
import type { AgentSession } from "../../src/agent/session.ts";
import { ExtractiveSummarizer } from "../../src/memory/summary.ts";
import { cleanupTempDirs } from "../support/cli.ts";
import {
  httpError,
  conversationMessages,
  lastUserText,
  startFakeResponsesServer,
  textStream,
  type FakeResponse,
  type FakeResponsesServer,
  type RecordedRequest,
} from "../support/fake-responses-server.ts";
import { makeGitWorkspace, manifests, openAgent, recordsOf, runTurn, type TurnResult } from "./support/agent-harness.ts";
import { isFoldRequest } from "./support/cost-model.ts";
import { formatManifestReport } from "../../src/cli/manifest-reports/manifest-report.ts";
import { makePaint } from "../../src/cli/manifest-reports/text-style.ts";
import type { Manifest } from "../../src/prompt/manifest-schema.ts";

const SLIDE = { shortBufferTurns: 20, windowBlockTurns: 4 };
const MODEL_SUMMARY = "SUMMARY-BY-MODEL: the user asked about messages 1 to 4.";

let server: FakeResponsesServer;
beforeEach(() => {
  server = startFakeResponsesServer();
});
afterEach(async () => {
  await server.close();
});
afterAll(cleanupTempDirs);

function answerTurns(summary: (body: Record<string, unknown>) => FakeResponse): void {
  server.setResponder((body) => (isFoldRequest(body) ? summary(body) : textStream(`answer to ${lastUserText(body)}`)));
}

async function runTurns(session: AgentSession, from: number, to: number): Promise<TurnResult[]> {
  const results: TurnResult[] = [];
  for (let n = from; n <= to; n++) results.push(await runTurn(session, `message ${n}`));
  return results;
}

function mainRequests(): RecordedRequest[] {
  return server.requests.filter((r) => !isFoldRequest(r.body));
}

function userMessages(request: RecordedRequest | undefined): string[] {
  return conversationMessages(request?.body ?? {})
    .filter((i) => i.role === "user")
    .map((i) => i.content ?? "");
}

function inputText(request: RecordedRequest | undefined): string {
  return JSON.stringify(request?.body.input ?? []);
}

describe("window sliding", () => {
  test("offline summarizer: turn 20 fills the window and folds turns 1–16 (all but the last 4); the next request carries the summary, not those turns", async () => {
    const root = await makeGitWorkspace();
    answerTurns(() => textStream("unused"));
    const { session } = await openAgent(root, server, { settings: SLIDE, summarizer: new ExtractiveSummarizer() });
    const turns = await runTurns(session, 1, 20);

    expect(turns.slice(0, 19).flatMap((t) => t.types)).not.toContain("window_slid");
    const slid = turns[19]?.events.find((e) => e.type === "window_slid");
    expect(slid).toMatchObject({ type: "window_slid", foldedTurns: 16 });
    // The answer is delivered before the fold runs (a fold may be a model call of its own).
    const types = turns[19]?.types ?? [];
    expect(types.indexOf("turn_end")).toBeLessThan(types.indexOf("window_slid"));
    expect(recordsOf(session, "summary")).toEqual([
      expect.objectContaining({ from_turn: 1, through_turn: 16, reason: "window_full", summarizer: "extractive" }),
    ]);
    expect(mainRequests()[19] && userMessages(mainRequests()[19])).toContain("message 1");

    await runTurn(session, "message 21");
    const next = mainRequests()[20];
    const users = userMessages(next);
    expect(users).toEqual(["message 17", "message 18", "message 19", "message 20", "message 21"]);
    expect(inputText(next)).toContain("conversation_summary");
    expect(inputText(next)).toContain("(turns 1–16)");
    // The manifest names the break: the summary changed, so what follows it is sent again.
    const prefix = (await manifests(session)).at(-1)?.prefix;
    expect(prefix).toMatchObject({ kind: "break", first_changed: { region: "summary" } });
    // Requests between folds append: the previous request is repeated through its user message.
    const appended = (await manifests(session))[10]?.prefix;
    expect(appended).toMatchObject({ kind: "append" });
    expect(appended?.reused_tokens).toBeGreaterThan(0);
  });

  test("the summary survives a resume: the rebuilt window starts after the folded turns", async () => {
    const root = await makeGitWorkspace();
    answerTurns(() => textStream("unused"));
    const first = await openAgent(root, server, { settings: SLIDE, summarizer: new ExtractiveSummarizer() });
    await runTurns(first.session, 1, 20);
    await first.session.close();
    const again = await openAgent(root, server, { settings: SLIDE, resume: { kind: "latest" }, summarizer: new ExtractiveSummarizer() });
    await runTurn(again.session, "message 21");
    const users = userMessages(mainRequests()[20]);
    expect(users[0]).toBe("message 17");
    expect(inputText(mainRequests()[20])).toContain("conversation_summary");
  });

  test("model summarizer: the fold request rides the turn request's cache; its answer becomes the summary", async () => {
    const root = await makeGitWorkspace();
    answerTurns(() => textStream(MODEL_SUMMARY));
    const { session } = await openAgent(root, server, { settings: SLIDE });
    await runTurns(session, 1, 20);

    const summaryRequests = server.requests.filter((r) => isFoldRequest(r.body));
    expect(summaryRequests).toHaveLength(1);
    const request = summaryRequests[0];
    const lastTurn = mainRequests()[19];
    // Same cache key, tools and instructions as the turn requests, and the window as it was...
    expect(request?.body.prompt_cache_key).toBe(`valarmind-${session.sessionId}`);
    expect(request?.body.tools).toEqual(lastTurn?.body.tools);
    expect(request?.body.instructions).toBe(lastTurn?.body.instructions);
    expect(userMessages(request)).toEqual(Array.from({ length: 19 }, (_, i) => `message ${i + 1}`));
    // ...repeating the last turn request up to its user message, then asking for the fold: turn 20
    // is kept, and its answer would be the only uncached part besides the ask.
    const turnInput = (lastTurn?.body.input ?? []) as unknown[];
    const foldInput = (request?.body.input ?? []) as unknown[];
    const through = turnInput.findIndex((item) => JSON.stringify(item).includes('"content":"message 20"'));
    expect(through).toBeGreaterThan(0);
    expect(foldInput).toHaveLength(through + 1);
    expect(foldInput.slice(0, through)).toEqual(turnInput.slice(0, through));
    expect(JSON.stringify(foldInput.at(-1))).toContain('<fold_request turns=\\"1–16\\" count=\\"16\\"');
    expect(recordsOf(session, "summary")).toEqual([expect.objectContaining({ from_turn: 1, through_turn: 16, summarizer: "model", text: MODEL_SUMMARY })]);

    await runTurn(session, "message 21");
    const next = mainRequests()[20];
    expect(inputText(next)).toContain(MODEL_SUMMARY);
    expect(userMessages(next)[0]).toBe("message 17");
  });

  test("large turns cost more to keep than to fold: they fold before the window is full, and the manifest says why", async () => {
    const root = await makeGitWorkspace();
    server.setResponder((body) => textStream(isFoldRequest(body) ? MODEL_SUMMARY : "noted"));
    // The default of 1 kept turn: with 4 kept, re-sending them makes a fold dear enough that these
    // ~1k-token turns reach FOLD_RENT_FACTOR × its cost only when the window is full anyway.
    const { session } = await openAgent(root, server, { settings: { ...SLIDE, windowBlockTurns: 1 } });
    const paste = (n: number) => `message ${n}: ${Array.from({ length: 100 }, (_, i) => `log line ${n}.${i} status=${(i * 37) % 500}`).join("\n")}`;
    for (let n = 1; n <= 19; n++) await runTurn(session, paste(n));
    const folds = recordsOf(session, "summary");
    expect(folds.length).toBeGreaterThanOrEqual(1);
    expect(folds[0]).toMatchObject({ from_turn: 1, reason: "cost", summarizer: "model" });
    expect(folds[0]?.through_turn).toBeLessThan(16);
    const foldManifest = (await manifests(session)).find((m) => m.purpose === "summary");
    const ask = foldManifest?.items.find((i) => i.id === "fold_request");
    expect(ask?.detail).toMatch(/have cost ~\d+ in cached re-sends since they could fold; a fold costs ~\d+ once/);
    // ...for the user; the model is asked for the summary only (bookkeeping figures are tokens it
    // would read uncached at every fold).
    const foldAsk = server.requests.find((r) => isFoldRequest(r.body));
    expect(JSON.stringify(foldAsk?.body.input)).toContain("<fold_request");
    expect(JSON.stringify(foldAsk?.body.input)).not.toContain("cached re-sends");
    // The fold request repeats the turn request before it: nearly all of it can be cached.
    expect(foldManifest?.prefix?.kind).toBe("append");
    expect(foldManifest?.prefix?.predicted_cached_tokens).toBeGreaterThan((foldManifest?.total_tokens ?? 0) * 0.8);
  });

  test("a failing summary request falls back to the offline summarizer and says so", async () => {
    const root = await makeGitWorkspace();
    answerTurns(() => httpError(400, { message: "summary model unavailable", code: "model_not_found" }));
    const { session } = await openAgent(root, server, { settings: SLIDE });
    const turns = await runTurns(session, 1, 20);
    const last = turns[19];
    expect(last?.stopReason).toBe("completed");
    expect(last?.events.find((e) => e.type === "notice")).toMatchObject({ message: expect.stringContaining("offline summarizer") });
    // The record names the summarizer that actually wrote the summary.
    expect(recordsOf(session, "summary")).toEqual([expect.objectContaining({ from_turn: 1, through_turn: 16, summarizer: "extractive" })]);
    await runTurn(session, "message 21");
    expect(userMessages(mainRequests()[20])[0]).toBe("message 17");
  });
});

describe("the manifest report says where the prefix broke", () => {
  test("/manifest of the request after a fold names the break, its reason and the predicted and reported cached tokens", async () => {
    const root = await makeGitWorkspace();
    answerTurns(() => textStream("unused"));
    const { session } = await openAgent(root, server, { settings: SLIDE, summarizer: new ExtractiveSummarizer() });
    await runTurns(session, 1, 21);
    const all = await manifests(session);
    const report = formatManifestReport(all.at(-1) as Manifest, { paint: makePaint(false), title: "last" });
    expect(report).toMatch(/prefix {2}breaks turn 20 step 1 at summary: the rolling summary changed: turns were folded into it · reused [\d,]+ · predicted cached [\d,]+ · API cached [\d,]+/);
    const appended = formatManifestReport(all[10] as Manifest, { paint: makePaint(false), title: "11" });
    expect(appended).toMatch(/prefix {2}appends to turn 10 step 1 · reused [\d,]+ · predicted cached [\d,]+/);
  });
});
