/**
 * Memory-cost benchmark (issue 12): what each kind of session costs against a recording server
 * that applies OpenAI's prefix-cache rule (cached = longest common prefix with an earlier request
 * of the same prompt_cache_key, from 1024 tokens up, in 128-token steps) and prices a cached token
 * at a tenth of a fresh one: effective input = uncached + 0.1 × cached. Every request counts,
 * fold (summary) requests included.
 *
 * Each session runs in-process (one AgentSession, default settings, full-auto) against the fake
 * Responses server over real HTTP, beside a full-history baseline rebuilt from its transcript:
 * the same tools and instructions, every earlier message and tool output appended verbatim — what
 * pi and OpenCode send — priced by the same rule (so perfectly cached).
 *
 * - chat-40: 40 chat turns, no tool calls, a ~3k-token log pasted every 10 turns;
 * - tool-heavy: the 40-turn scripted coding session of agent.bench.ts (reads, greps, edits, shell);
 * - chat-200: 200 chat turns with 20 planted facts and three supersessions;
 * - chat-40 at MAX_CONTEXT_TOKENS=4500: every turn must end normally.
 * Per-request figures go to bench/results/memory-cost-requests.jsonl.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { AgentSession } from "../src/agent/session.ts";
import { createOpenAIClient } from "../src/model/openai-client.ts";
import { exactCounter } from "../src/prompt/builder.ts";
import { readManifests } from "../src/prompt/manifest.ts";
import { readSession } from "../src/session/transcript.ts";
import type { Settings } from "../src/config/settings-schema.ts";
import { testSettings, runTurn } from "../test/agent/support/agent-harness.ts";
import { BENCH_FILES } from "../test/agent/support/bench-workspace.ts";
import { BENCH_TURNS } from "../test/agent/support/bench-conversation.ts";
import { answerText } from "../test/agent/support/bench-prose.ts";
import { chatSession, PLANTED_FACTS, type CostTurn } from "../test/agent/support/cost-sessions.ts";
import { DEFAULT_OUTPUT_PRICE } from "../src/memory/fold-economics.ts";
import { fakeFoldSummary, isFoldRequest, scriptedTurnReply, type ScriptedTurnReply } from "../test/agent/support/cost-model.ts";
import { callsOf, fullHistoryInput, requestShape } from "../test/agent/support/request-metrics.ts";
import { startFakeResponsesServer, textStream, toolCallStream } from "../test/support/fake-responses-server.ts";
import { cacheableText, createUsageSimulator } from "../test/support/usage-simulation.ts";
import type { BenchContext, BenchRow } from "./harness.ts";
import { inputItemText } from "../src/model/input-item-text.ts";

interface SessionFigures {
  name: string;
  requests: number;
  foldRequests: number;
  input: number;
  cached: number;
  effective: number;
  baselineInput: number;
  baselineCached: number;
  baselineEffective: number;
  /** Tokens of the summaries the model wrote (fold answers): output, priced above input. */
  foldOutput: number;
  failedTurns: number;
  facts: Array<{ name: string; present: boolean; supersededStill: boolean }>;
  requestsWithRepeatedBlock: number;
  repeatedExample: string;
  lastRequestTokens: number;
}

/** The first block of `size` characters that occurs twice in `text`, or "". */
export function repeatedBlock(text: string, size = 200): string {
  if (text.length < size * 2) return "";
  const seen = new Map<string, number>();
  // Blocks starting at every 50th character are indexed; any repeat of ≥ 250 characters contains one.
  for (let i = 0; i + size <= text.length; i += 50) {
    const block = text.slice(i, i + size);
    const at = seen.get(block);
    if (at !== undefined && i - at >= size) return block;
    if (at === undefined) seen.set(block, i);
  }
  return "";
}

function modelText(body: Record<string, unknown>): string {
  const shape = requestShape(body);
  return [shape.instructions, ...shape.input.map(inputItemText)].join("\n");
}

async function runSession(ctx: BenchContext, name: string, turns: ScriptedTurnReply[], options: { files?: Record<string, string>; settings?: Partial<Settings>; facts?: boolean } = {}): Promise<{ figures: SessionFigures; perRequest: Array<Record<string, unknown>> }> {
  const count = await exactCounter();
  const root = await ctx.tempDir();
  for (const [rel, content] of Object.entries(options.files ?? {})) {
    mkdirSync(dirname(join(root, rel)), { recursive: true });
    writeFileSync(join(root, rel), content);
  }
  const gitEnv = { ...process.env, GIT_AUTHOR_NAME: "bench", GIT_AUTHOR_EMAIL: "b@example.com", GIT_COMMITTER_NAME: "bench", GIT_COMMITTER_EMAIL: "b@example.com" };
  for (const argv of [["git", "init", "-q", "."], ["git", "add", "-A"], ["git", "commit", "-q", "--allow-empty", "-m", "start"]]) Bun.spawnSync(argv, { cwd: root, env: gitEnv });

  const byStart = new Map(turns.map((t) => [t.user.slice(0, 80), t]));
  const simulate = createUsageSimulator();
  const usageOf: Array<{ input: number; cached: number; fold: boolean }> = [];
  let foldOutput = 0;
  const server = startFakeResponsesServer({
    async responder(body, index) {
      if (isFoldRequest(body)) {
        const summary = fakeFoldSummary(body);
        const usage = await simulate(body, count(summary));
        foldOutput += count(summary);
        usageOf[index] = { input: usage.input_tokens ?? 0, cached: usage.cached_tokens ?? 0, fold: true };
        return textStream(summary, { request: body, usage });
      }
      const reply = scriptedTurnReply(body, byStart);
      if (!reply) throw new Error(`${name}: request #${index} answers no scripted turn`);
      const usage = await simulate(body, count(reply.text ?? JSON.stringify(reply.calls ?? [])));
      usageOf[index] = { input: usage.input_tokens ?? 0, cached: usage.cached_tokens ?? 0, fold: false };
      const spec = { request: body, usage };
      return reply.calls ? toolCallStream(reply.calls, spec) : textStream(reply.text ?? "", spec);
    },
  });
  const model = createOpenAIClient({ apiKey: "sk-bench", baseURL: server.baseURL, sleep: async () => {} });
  const session = await AgentSession.open({
    root,
    // What-if runs (not the recorded figures): VALARMIND_BENCH_SETTINGS='{"windowBlockTurns":3}'.
    settings: testSettings({ approvals: "full-auto", ...options.settings, ...(process.env.VALARMIND_BENCH_SETTINGS ? (JSON.parse(process.env.VALARMIND_BENCH_SETTINGS) as Partial<Settings>) : {}) }),
    model,
    interactive: false,
    resume: { kind: "new" },
  });
  let failedTurns = 0;
  try {
    for (const turn of turns) {
      const result = await runTurn(session, turn.user);
      if (result.stopReason !== "completed") failedTurns++;
    }
  } finally {
    await session.close();
    await server.close();
  }

  const file = session.transcriptPath;
  if (!file) throw new Error(`${name}: no transcript`);
  // Each turn request's tokens by region, from its manifest (in request order).
  const manifests = (await readManifests(join(session.paths.sessionsDir, session.sessionId))).map((m) => m.manifest).filter((m) => m.purpose === "turn");
  const regionsOf = manifests.map((m) => {
    const byRegion: Record<string, number> = {};
    for (const item of m.items) byRegion[item.region] = (byRegion[item.region] ?? 0) + item.tokens;
    return { regions: byRegion, prefix: m.prefix?.kind ?? "", first_changed: m.prefix?.first_changed?.id ?? "", predicted_cached: m.prefix?.predicted_cached_tokens ?? 0 };
  });
  const records = readSession(file).records;
  const calls = callsOf(records);
  const main = server.requests.filter((r) => !isFoldRequest(r.body));
  if (main.length !== calls.length) throw new Error(`${name}: ${main.length} turn requests but ${calls.length} model calls in the transcript`);

  // The full-history baseline: the same calls, every earlier message appended, priced by the same rule.
  const baselineSim = createUsageSimulator();
  let baselineInput = 0;
  let baselineCached = 0;
  for (const [i, request] of main.entries()) {
    const call = calls[i];
    if (!call) continue;
    const body = { ...request.body, input: fullHistoryInput(records, call) };
    const usage = await baselineSim(body, 0);
    baselineInput += usage.input_tokens ?? 0;
    baselineCached += usage.cached_tokens ?? 0;
  }

  let input = 0;
  let cached = 0;
  let mainIndex = 0;
  let repeated = 0;
  let example = "";
  const perRequest: Array<Record<string, unknown>> = [];
  for (const request of server.requests) {
    const u = usageOf[request.index];
    if (!u) continue;
    input += u.input;
    cached += u.cached;
    if (!u.fold) {
      const block = repeatedBlock(modelText(request.body));
      if (block) {
        repeated++;
        example ||= block.slice(0, 80);
      }
    }
    const detail = u.fold ? {} : (regionsOf[mainIndex++] ?? {});
    perRequest.push({ session: name, request: request.index, fold: u.fold, input: u.input, cached: u.cached, ...detail });
  }
  const last = main.at(-1);
  const lastText = last ? cacheableText(last.body) : "";
  const facts = options.facts
    ? PLANTED_FACTS.map((fact) => ({ name: fact.name, present: fact.needles.every((n) => lastText.includes(n)), supersededStill: (fact.gone ?? []).some((g) => lastText.includes(g)) }))
    : [];
  return {
    figures: {
      name,
      requests: server.requests.length,
      foldRequests: server.requests.filter((r) => isFoldRequest(r.body)).length,
      input,
      cached,
      effective: input - cached + 0.1 * cached,
      baselineInput,
      baselineCached,
      baselineEffective: baselineInput - baselineCached + 0.1 * baselineCached,
      foldOutput,
      failedTurns,
      facts,
      requestsWithRepeatedBlock: repeated,
      repeatedExample: example,
      lastRequestTokens: usageOf[last?.index ?? -1]?.input ?? 0,
    },
    perRequest,
  };
}

function chatTurns(turns: CostTurn[]): ScriptedTurnReply[] {
  return turns.map((t) => ({ user: t.user, answer: t.answer, ...(t.calls ? { steps: [t.calls] } : {}) }));
}

/** The agent bench's 40-turn coding session, step by step. */
async function toolHeavy(ctx: BenchContext): Promise<{ figures: SessionFigures; perRequest: Array<Record<string, unknown>> }> {
  const replies: ScriptedTurnReply[] = BENCH_TURNS.map((turn, i) => ({ user: turn.user, answer: answerText(i + 1, turn.answer), steps: turn.steps.map((s) => s.calls) }));
  return runSession(ctx, "tool-heavy", replies, { files: BENCH_FILES });
}

function rows(f: SessionFigures, targets: { ratio?: number }): BenchRow[] {
  const share = f.cached / f.input;
  const baseShare = f.baselineCached / f.baselineInput;
  const ratio = f.effective / f.baselineEffective;
  const out: BenchRow[] = [
    { name: `${f.name}: effective input (uncached + 0.1 × cached)`, value: Math.round(f.effective), unit: "tokens", note: `${f.requests} requests (${f.foldRequests} fold); sent ${f.input} tokens, ${f.cached} cached; last request ${f.lastRequestTokens}` },
    { name: `${f.name}: full-history baseline, effective input`, value: Math.round(f.baselineEffective), unit: "tokens", note: `sent ${f.baselineInput} tokens, cached share ${baseShare.toFixed(3)}` },
    { name: `${f.name}: effective input / full-history baseline`, value: ratio, unit: "ratio", ...(targets.ratio !== undefined ? { target: { max: targets.ratio } } : {}) },
    { name: `${f.name}: simulated cached share`, value: share, unit: "ratio", target: { min: 0.9 } },
    {
      name: `${f.name}: with the summaries it wrote priced as output (${DEFAULT_OUTPUT_PRICE}× a fresh input token) / baseline`,
      value: (f.effective + DEFAULT_OUTPUT_PRICE * f.foldOutput) / f.baselineEffective,
      unit: "ratio",
      note: `${f.foldOutput} tokens of summary written in ${f.foldRequests} folds; the answers are the same in both, so not counted`,
    },
    {
      name: `${f.name}: lowest possible effective input at cached share ≥ 0.90, answers sent whole / baseline`,
      value: (1.9 * (f.baselineInput - f.baselineCached)) / f.baselineEffective,
      unit: "ratio",
      note: `a design that sends every message and answer whole sends the session's new content once, uncached (${f.baselineInput - f.baselineCached} tokens: the baseline's uncached part); a share of 0.90 means 9 cached tokens per uncached one, so effective ≥ 1.9 × that. Answers as their gist (ADR 0087) go below it`,
    },
    { name: `${f.name}: requests with a 200-character block twice`, value: f.requestsWithRepeatedBlock, unit: "count", target: { max: 0 }, ...(f.repeatedExample ? { note: `e.g. ${JSON.stringify(f.repeatedExample)}` } : {}) },
    { name: `${f.name}: failed turns`, value: f.failedTurns, unit: "count", target: { max: 0 } },
  ];
  if (f.facts.length > 0) {
    const missing = f.facts.filter((x) => !x.present).map((x) => x.name);
    const stale = f.facts.filter((x) => x.supersededStill).map((x) => x.name);
    out.push({ name: `${f.name}: planted facts in the last request`, value: f.facts.length - missing.length, unit: "count", target: { min: f.facts.length }, note: `${missing.length ? `missing: ${missing.join(", ")}` : "all present"}${stale.length ? `; superseded value still shown (as history) for: ${stale.join(", ")}` : ""}` });
  }
  return out;
}

export async function run(ctx: BenchContext): Promise<BenchRow[]> {
  const only = process.env.VALARMIND_COST_SESSIONS?.split(",");
  const want = (name: string) => !only || only.includes(name);
  const results: Array<{ figures: SessionFigures; perRequest: Array<Record<string, unknown>> }> = [];
  const out: BenchRow[] = [];
  if (want("chat-40")) {
    const r = await runSession(ctx, "chat-40", chatTurns(chatSession(40)));
    results.push(r);
    out.push(...rows(r.figures, { ratio: 0.55 }));
  }
  if (want("tool-heavy")) {
    const r = await toolHeavy(ctx);
    results.push(r);
    out.push(...rows(r.figures, {}));
  }
  if (want("chat-200")) {
    const r = await runSession(ctx, "chat-200", chatTurns(chatSession(200, { facts: true })), { facts: true });
    results.push(r);
    out.push(...rows(r.figures, { ratio: 0.15 }));
  }
  if (want("chat-40-4500")) {
    const r = await runSession(ctx, "chat-40 at MAX_CONTEXT_TOKENS=4500", chatTurns(chatSession(40)), { settings: { maxContextTokens: 4500 } });
    results.push(r);
    out.push({ name: "chat-40 at MAX_CONTEXT_TOKENS=4500: failed turns", value: r.figures.failedTurns, unit: "count", target: { max: 0 }, note: `effective ${Math.round(r.figures.effective)} tokens, cached share ${(r.figures.cached / r.figures.input).toFixed(3)}, last request ${r.figures.lastRequestTokens}` });
  }
  const lines = results.flatMap((r) => r.perRequest.map((p) => JSON.stringify(p)));
  writeFileSync(join(import.meta.dir, "results", "memory-cost-requests.jsonl"), `${lines.join("\n")}\n`);
  return out;
}
