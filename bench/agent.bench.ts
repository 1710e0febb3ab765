/**
 * Agent-core benchmark (issue 4 Targets): a scripted 40-turn headless conversation — `chat -p`,
 * then 39 × `chat --continue -p`, each a fresh process, default settings plus `--yes` so the
 * scripted edits and shell commands run — against the fake Responses server in this process.
 * The conversation (test/agent/support/bench-conversation.ts) has user messages of varied length
 * (two pasted logs), read_file / grep / run_shell / edit_file / write_file calls on a real small
 * repository, answers of a few hundred tokens, and early facts recorded through memory tools.
 *
 * Measured from the request bodies the server received (exact o200k counts):
 * - the last request's size and the session's total input, against a full-history baseline
 *   rebuilt from the transcript (every earlier message and tool output resent verbatim);
 * - the share of each request that is a byte-identical prefix of the previous request with the
 *   same prompt_cache_key (serialized tools · instructions · input items, counted in tokens);
 * - whether the early facts are in the final request, and where;
 * - overhead per turn: process spawn → first request at the server, plus end of the last answer
 *   → process exit (both clocks are this process's).
 * Per-request figures go to bench/results/agent-requests.jsonl. VALARMIND_BENCH_KEEP=DIR copies the
 * workspace (with its .valarmind/ sessions and manifests) there for inspection; VALARMIND_BENCH_CONFIG
 * (JSON) becomes the workspace's .valarmind/config.json for what-if runs.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join, dirname } from "node:path";
import { exactCounter } from "../src/prompt/builder.ts";
import { latestSession, readSession } from "../src/session/transcript.ts";
import { workspacePaths } from "../src/config/paths.ts";
import { BENCH_FILES } from "../test/agent/support/bench-workspace.ts";
import { BENCH_TURNS, EARLY_FACTS } from "../test/agent/support/bench-conversation.ts";
import { fakeSummary, isSummaryRequest, scriptedReply } from "../test/agent/support/bench-model.ts";
import { callsOf, fullHistoryInput, requestShape, requestTokens, sharedPrefix, type RequestShape } from "../test/agent/support/request-metrics.ts";
import { lastUserText, startFakeResponsesServer, textStream, toolCallStream } from "../test/support/fake-responses-server.ts";
import { createUsageSimulator } from "../test/support/usage-simulation.ts";
import { median, type BenchContext, type BenchRow } from "./harness.ts";
import { inputItemText } from "../src/model/input-item-text.ts";

interface TurnTiming {
  turn: number;
  startMs: number;
  endMs: number;
  /** The process's own CPU time (user + system): what the overhead costs without other load. */
  cpuMs: number;
}

export async function run(ctx: BenchContext): Promise<BenchRow[]> {
  const count = await exactCounter();
  const root = await ctx.tempDir();
  for (const [rel, content] of Object.entries(BENCH_FILES)) {
    mkdirSync(dirname(join(root, rel)), { recursive: true });
    writeFileSync(join(root, rel), content);
  }
  const gitEnv = { ...process.env, GIT_AUTHOR_NAME: "bench", GIT_AUTHOR_EMAIL: "bench@example.com", GIT_COMMITTER_NAME: "bench", GIT_COMMITTER_EMAIL: "bench@example.com" };
  for (const argv of [["git", "init", "-q", "."], ["git", "add", "-A"], ["git", "commit", "-q", "-m", "links v0.2"]]) {
    if (Bun.spawnSync(argv, { cwd: root, env: gitEnv }).exitCode !== 0) throw new Error(`${argv.join(" ")} failed in ${root}`);
  }

  // What-if runs (not the recorded figures): VALARMIND_BENCH_CONFIG='{"shortBufferTurns":20}' becomes .valarmind/config.json.
  const config = process.env.VALARMIND_BENCH_CONFIG;
  if (config) {
    mkdirSync(join(root, ".valarmind"), { recursive: true });
    writeFileSync(join(root, ".valarmind", "config.json"), config);
  }

  const simulateUsage = createUsageSimulator();
  const arrivedAt: number[] = [];
  const answeredAt: number[] = [];
  const simulatedCached: number[] = [];
  const simulatedInput: number[] = [];
  const server = startFakeResponsesServer({
    onRequest(request) {
      if (request.path !== "/v1/responses") return;
      arrivedAt[request.index] = performance.now();
      void server.outcome(request.index).then(() => (answeredAt[request.index] = performance.now()));
    },
    async responder(body, index) {
      if (isSummaryRequest(body)) {
        const summary = fakeSummary(body);
        const usage = await simulateUsage(body, count(summary));
        simulatedCached[index] = usage.cached_tokens ?? 0;
        return textStream(summary, { request: body, usage });
      }
      const reply = scriptedReply(body);
      if (!reply) throw new Error(`request #${index} answers no scripted turn (last user message: ${lastUserText(body).slice(0, 80)})`);
      const usage = await simulateUsage(body, count(reply.text ?? "") + count(JSON.stringify(reply.calls ?? [])));
      simulatedCached[index] = usage.cached_tokens ?? 0;
      simulatedInput[index] = usage.input_tokens ?? 0;
      const spec = { request: body, usage, ...(reply.text !== undefined ? { text: reply.text } : {}) };
      return reply.calls ? toolCallStream(reply.calls, spec) : textStream(reply.text ?? "", spec);
    },
  });

  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !/^(OPENAI_|VALARMIND_|MAX_CONTEXT_TOKENS|SHORT_BUFFER_TURNS)/.test(key)) env[key] = value;
  }
  Object.assign(env, { NO_COLOR: "1", XDG_CONFIG_HOME: join(root, ".bench-config"), OPENAI_BASE_URL: server.baseURL });

  const timings: TurnTiming[] = [];
  try {
    for (const [i, turn] of BENCH_TURNS.entries()) {
      const args = i === 0 ? ["chat", "-p", turn.user, "--yes"] : ["chat", "--continue", "-p", turn.user, "--yes"];
      const first = server.requests.length;
      const spawnedAt = performance.now();
      const child = Bun.spawn([...ctx.cli, ...args], { cwd: root, env, stdout: "pipe", stderr: "pipe" });
      const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
      const exitedAt = performance.now();
      const usage = child.resourceUsage();
      const cpuMs = usage ? Number(usage.cpuTime.user + usage.cpuTime.system) / 1000 : Number.NaN;
      if (code !== 0) throw new Error(`turn ${i + 1} exited ${code}\nstdout: ${stdout}\nstderr: ${stderr}\nserver problems: ${server.problems.join("; ")}`);
      const mine = server.requests.slice(first).filter((r) => !isSummaryRequest(r.body));
      const firstMain = mine[0];
      const lastMain = mine.at(-1);
      if (!firstMain || !lastMain) throw new Error(`turn ${i + 1} sent no request`);
      await server.outcome(lastMain.index);
      timings.push({
        turn: i + 1,
        startMs: (arrivedAt[firstMain.index] ?? Number.NaN) - spawnedAt,
        endMs: exitedAt - (answeredAt[lastMain.index] ?? Number.NaN),
        cpuMs,
      });
    }
  } finally {
    await server.close();
  }

  // What was sent, and the full-history baseline for the same calls.
  const ref = latestSession(workspacePaths(root));
  if (!ref) throw new Error("the benchmark session left no transcript");
  const records = readSession(ref.file).records;
  const calls = callsOf(records);
  const main = server.requests.filter((r) => !isSummaryRequest(r.body));
  const summaries = server.requests.filter((r) => isSummaryRequest(r.body));
  if (main.length !== calls.length) throw new Error(`${main.length} main requests but the transcript has ${calls.length} model calls`);

  let ours = 0;
  let baseline = 0;
  let prefixTokens = 0;
  let prefixTotal = 0;
  let cachedSim = 0;
  let inputSim = 0;
  let previous: RequestShape | undefined;
  const perRequest: Array<Record<string, number | string>> = [];
  for (const [i, request] of main.entries()) {
    const shape = requestShape(request.body);
    const call = calls[i] ?? { turn: 0, step: 0 };
    const tokens = requestTokens(shape, count);
    const full = requestTokens({ ...shape, input: fullHistoryInput(records, call) }, count);
    const shared = sharedPrefix(previous, shape, count);
    if (previous) {
      prefixTokens += shared.prefix;
      prefixTotal += shared.total;
    }
    cachedSim += simulatedCached[request.index] ?? 0;
    inputSim += simulatedInput[request.index] ?? 0;
    ours += tokens;
    baseline += full;
    perRequest.push({ request: request.index, turn: call.turn, step: call.step, tokens, full_history_tokens: full, prefix_share: previous ? shared.prefix / shared.total : 0, simulated_cached: simulatedCached[request.index] ?? 0 });
    previous = shape;
  }
  const summaryTokens = summaries.reduce((n, r) => n + requestTokens(requestShape(r.body), count), 0);
  const last = main.at(-1);
  const lastShape = last ? requestShape(last.body) : undefined;
  const lastTokens = lastShape ? requestTokens(lastShape, count) : Number.NaN;
  const lastFull = Number(perRequest.at(-1)?.full_history_tokens ?? Number.NaN);

  // Early facts in the final request, and where they are.
  const where = (needle: string): string[] => {
    if (!lastShape) return [];
    const places: string[] = [];
    if (lastShape.instructions.includes(needle)) places.push("instructions");
    for (const item of lastShape.input) {
      const text = inputItemText(item);
      if (!text.includes(needle)) continue;
      if (text.includes("<working_state")) places.push("state");
      else if (text.includes("<conversation_summary")) places.push("summary");
      // Working set and volatile context are user-role data messages: not the window.
      else if (text.includes("<working_set_item")) places.push("working set");
      else if (text.includes("<volatile_context")) places.push("context");
      else if (item.type === "message" && (item.role === "user" || item.role === "assistant")) places.push("window");
      else places.push(item.type === "message" ? "context" : "tool output");
    }
    return [...new Set(places)];
  };
  const facts = EARLY_FACTS.map((fact) => {
    const found = fact.needles.map((needle) => where(needle));
    return { name: fact.name, present: found.every((p) => p.length > 0), places: [...new Set(found.flat())] };
  });

  const toolErrors = records.filter((r) => r.kind === "tool_call" && r.is_error).length;
  const overhead = timings.map((t) => t.startMs + t.endMs);
  const worst = timings.reduce((a, b) => (b.startMs + b.endMs > a.startMs + a.endMs ? b : a));
  const resultsDir = join(import.meta.dir, "results");
  // One JSON object per line: per-request figures, summary requests, per-turn timings, facts.
  const lines = [
    ...perRequest.map((r) => ({ kind: "request", ...r })),
    ...summaries.map((r) => ({ kind: "summary_request", request: r.index, tokens: requestTokens(requestShape(r.body), count) })),
    ...timings.map((t) => ({ kind: "turn", ...t })),
    ...facts.map((f) => ({ kind: "fact", ...f })),
  ];
  writeFileSync(join(resultsDir, "agent-requests.jsonl"), lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
  if (process.env.VALARMIND_BENCH_KEEP) Bun.spawnSync(["cp", "-r", root, process.env.VALARMIND_BENCH_KEEP]);

  return [
    { name: "last request: input tokens", value: lastTokens, unit: "tokens", target: { max: 10_000 }, note: `turn 40; a full-history agent would send ${lastFull}` },
    { name: "full-history baseline: last request", value: lastFull, unit: "tokens", note: "same tools and instructions, every earlier message and tool output verbatim" },
    { name: "total input over the session", value: ours + summaryTokens, unit: "tokens", note: `${main.length} turn requests (${ours}) + ${summaries.length} summary request(s) (${summaryTokens}); baseline ${baseline}` },
    // Tokens sent, not what they cost: since issue 12 the objective is effective input (uncached + 0.1 × cached),
    // measured on this same script in memory-cost.bench.ts ("tool-heavy"); a window that keeps reads whole sends more, cached.
    { name: "total input / full-history baseline", value: (ours + summaryTokens) / baseline, unit: "ratio", note: "tokens sent; the cost objective is in memory-cost (tool-heavy: effective input / baseline)" },
    { name: "cache-eligible share (unchanged prefix of the previous request)", value: prefixTokens / prefixTotal, unit: "ratio", target: { min: 0.85 }, note: `token-weighted over requests 2–${main.length}; byte-identical prefix of tools·instructions·input, counted in o200k tokens` },
    { name: "lowest per-request prefix share", value: Math.min(...perRequest.slice(1).map((r) => Number(r.prefix_share))), unit: "ratio" },
    { name: "simulated cached share (OpenAI rule: ≥1024 tokens, 128-token steps)", value: cachedSim / inputSim, unit: "ratio", note: "the usage simulator's cached_tokens over all turn requests, the first included" },
    { name: "early facts present in the final request", value: facts.filter((f) => f.present).length, unit: "count", target: { min: EARLY_FACTS.length }, note: facts.map((f) => `${f.name}: ${f.present ? f.places.join("+") : "MISSING"}`).join("; ") },
    { name: "overhead per turn (spawn → request, answer → exit): median", value: median(overhead), unit: "ms", target: { max: 300 }, note: `start ${median(timings.map((t) => t.startMs)).toFixed(0)} ms + end ${median(timings.map((t) => t.endMs)).toFixed(0)} ms (medians of 40 turns)` },
    { name: "overhead per turn: worst turn", value: worst.startMs + worst.endMs, unit: "ms", target: { max: 300 }, note: `turn ${worst.turn}: start ${worst.startMs.toFixed(0)} ms + end ${worst.endMs.toFixed(0)} ms` },
    { name: "CPU time per headless turn (user + system): median", value: median(timings.map((t) => t.cpuMs)), unit: "ms", note: "the process and what it waited for (git, tool commands); unlike wall time, not inflated by other load on the machine" },
    { name: "scripted tool calls that failed", value: toolErrors, unit: "count", target: { max: 0 }, note: `of ${records.filter((r) => r.kind === "tool_call").length}` },
  ];
}
