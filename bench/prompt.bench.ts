/**
 * Prompt-builder benchmarks (issue 3 targets): assembling the next request of a 200-turn
 * session with a full working state and 50 working-set items, cold (first build in a fresh
 * process) and warm (a later build in the same process); `valarmind prompt --dry-run` end to end
 * on it; the unchanged-prefix share over a scripted 40-turn conversation at default settings;
 * tokenizer throughput.
 */
import { Value } from "@sinclair/typebox/value";
import { SettingsSchema, type Settings } from "../src/config/settings-schema.ts";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { workspacePaths } from "../src/config/paths.ts";
import { buildRequest, exactCounter } from "../src/prompt/builder.ts";
import { prefixShare } from "../src/prompt/prefix-share.ts";
import { MAIN_TURN_ORDER, mainTurnRegions } from "../src/prompt/standard-regions.ts";
import type { ModelRequest } from "../src/model/types.ts";
import { createSession } from "../src/session/transcript.ts";
import { serializeState } from "../src/state/store.ts";
import { toolSpecs } from "../src/tools/registry.ts";
import { scriptedConversation } from "../test/prompt/support/scripted-conversation.ts";
import { agentLikeRecords, fullState, syntheticWorkingSet } from "../test/prompt/support/synthetic-session.ts";
import { median, type BenchContext, type BenchRow } from "./harness.ts";

// The settings schema's own defaults, so "default settings" stays true when they change.
const DEFAULTS = Value.Default(SettingsSchema, {}) as Settings;
const MESSAGE = "Now fix the same off-by-one in src/lexer.ts and add a test for it.";

/** A workspace holding a 200-turn session as the agent writes it, a full state, VALARMIND.md and 50 working-set items. */
async function workspace200(ctx: BenchContext): Promise<string> {
  const root = await ctx.tempDir();
  const paths = workspacePaths(root);
  const count = await exactCounter();
  await mkdir(paths.memoryDir, { recursive: true });
  await writeFile(paths.stateJson, serializeState(fullState()));
  await writeFile(paths.instructions, await Bun.file(join(ctx.repoRoot, "test/prompt/fixtures/VALARMIND.md")).text());
  const session = createSession(paths, { model: DEFAULTS.model, cwd: root, id: "bench200", now: new Date("2026-01-31T12:00:00Z") });
  session.append(await agentLikeRecords({ turns: 200, shortBufferTurns: DEFAULTS.shortBufferTurns, windowBlockTurns: DEFAULTS.windowBlockTurns, countTokens: count }));
  session.append({ kind: "working_set", turn: 200, items: syntheticWorkingSet(50, count) });
  session.close();
  return root;
}

/** Runs in a fresh process: loads the session as `prompt --dry-run` does, then times builds. */
const PROBE = (repo: string) => `
import { workspacePaths } from "${repo}/src/config/paths.ts";
import { loadSettings } from "${repo}/src/config/load-settings.ts";
import { buildRequest } from "${repo}/src/prompt/builder.ts";
import { buildNextRequest } from "${repo}/src/prompt/next-request.ts";
import { toolSpecs } from "${repo}/src/tools/registry.ts";
const root = process.argv[2];
const paths = workspacePaths(root);
const settings = loadSettings(root);
const tools = toolSpecs(settings);
const t0 = performance.now();
const next = await buildNextRequest({ paths, settings, message: ${JSON.stringify(MESSAGE)}, tools });
const loadAndFirst = performance.now() - t0;
// Rebuild from the same inputs as the agent does on every model call (inputs already in memory).
const { ShortTermMemory } = await import("${repo}/src/memory/short-term.ts");
const { readSession, latestSession } = await import("${repo}/src/session/transcript.ts");
const { FileStateStore } = await import("${repo}/src/state/store.ts");
const { exactCounter } = await import("${repo}/src/prompt/builder.ts");
const count = await exactCounter();
const memory = ShortTermMemory.fromRecords(readSession(latestSession(paths).file).records, { ...settings, countTokens: count });
const state = (await new FileStateStore(paths).read()).state;
const input = { settings, sessionId: "bench200", turn: 201, now: new Date(), tools, sources: { state, project: { path: "VALARMIND.md", text: await Bun.file(paths.instructions).text() } }, memory: memory.view(), task: { userText: ${JSON.stringify(MESSAGE)}, items: [] } };
const warm = [];
for (let i = 0; i < 60; i++) { const s = performance.now(); await buildRequest(input); warm.push(performance.now() - s); }
warm.sort((a, b) => a - b);
console.log(JSON.stringify({ loadAndFirst, warmMedian: warm[30], warmP90: warm[54], total: next.manifest.total_tokens, stable: next.manifest.stable_prefix_tokens, items: next.manifest.items.length, window: memory.window.size, ws: memory.workingSet.items().length }));
`;

async function probe(ctx: BenchContext, root: string): Promise<{ loadAndFirst: number; warmMedian: number; warmP90: number; total: number; stable: number; items: number; window: number; ws: number }> {
  const dir = await ctx.tempDir();
  const script = join(dir, "probe.ts");
  await writeFile(script, PROBE(ctx.repoRoot));
  const proc = Bun.spawn([process.execPath, script, root], { cwd: ctx.repoRoot, stdout: "pipe", stderr: "pipe", env: { ...process.env, NO_COLOR: "1" } });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`prompt bench probe failed: ${err}`);
  return JSON.parse(out.trim().split("\n").at(-1) ?? "{}");
}

async function shares(regions = mainTurnRegions()): Promise<{ all: number; firstSteps: number; requests: number }> {
  const count = await exactCounter();
  const all: number[] = [];
  const first: number[] = [];
  let previous: ModelRequest | undefined;
  for await (const r of scriptedConversation({ turns: 40, settings: DEFAULTS, tools: toolSpecs(), regions })) {
    if (previous) {
      const { share } = prefixShare(previous, r.request, count);
      all.push(share);
      if (r.step === 1) first.push(share);
    }
    previous = r.request;
  }
  const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  return { all: avg(all), firstSteps: avg(first), requests: all.length + 1 };
}

async function throughput(ctx: BenchContext): Promise<BenchRow[]> {
  const count = await exactCounter();
  const files = ["src/prompt/builder.ts", "src/prompt/cutoff.ts", "src/memory/working-set.ts", "src/session/transcript.ts", "docs/architecture.md"];
  const base = (await Promise.all(files.map((f) => Bun.file(join(ctx.repoRoot, f)).text()))).join("\n");
  const times: number[] = [];
  let tokens = 0;
  let bytes = 0;
  for (let i = 0; i < 7; i++) {
    const text = `${base}\n// run ${i}\n`.repeat(Math.ceil(1e6 / base.length)); // ~1 MB, fresh each run: no memo hit
    bytes = Buffer.byteLength(text);
    const started = performance.now();
    tokens = count(text);
    times.push(performance.now() - started);
  }
  const ms = median(times);
  const memoTimes: number[] = [];
  const text = `${base}\n// memo\n`.repeat(Math.ceil(1e6 / base.length));
  count(text);
  for (let i = 0; i < 50; i++) {
    const s = performance.now();
    count(text);
    memoTimes.push(performance.now() - s);
  }
  return [
    { name: "tokenizer: count ~1 MB of source, uncached", value: ms, unit: "ms", note: `${tokens} tokens, ${(bytes / 1e6).toFixed(2)} MB: ${Math.round(tokens / (ms / 1000) / 1000)}k tokens/s, ${(bytes / 1e6 / (ms / 1000)).toFixed(1)} MB/s` },
    { name: "tokenizer: the same text again (memoised by hash)", value: median(memoTimes), unit: "ms", note: "what a window turn costs on every later build" },
  ];
}

export async function run(ctx: BenchContext): Promise<BenchRow[]> {
  const root = await workspace200(ctx);
  const p = await probe(ctx, root);
  const dryRun = await ctx.measureCommand([...ctx.cli, "prompt", "--dry-run", MESSAGE], { cwd: root, runs: 20, warmup: 3 });
  const standard = await shares();
  const singleWindow = await shares(
    mainTurnRegions()
      .withRegion("conversation", [...mainTurnRegions().sectionsOf("conversation"), ...mainTurnRegions().sectionsOf("recent")])
      .withoutRegions(["recent"])
      .withRegionalOrder(["core", "project", "personal", "summary", "conversation", "state", "context", "working_set", "task"]),
  );
  const sample = await buildRequest({ settings: DEFAULTS, sessionId: "x", turn: 1, task: { userText: MESSAGE, items: [] }, tools: toolSpecs() });
  return [
    {
      name: "assembly, 200-turn session + full state + 50 working-set items: warm",
      value: p.warmMedian,
      unit: "ms",
      target: { max: 10 },
      note: `median of 60 builds in one process (p90 ${p.warmP90.toFixed(1)} ms); ${p.window} window turns, ${p.ws} working-set items, ${p.items} manifest items, ${p.total} tokens (${p.stable} stable prefix)`,
    },
    {
      name: "assembly, same: cold (fresh process, load transcript + state + first build)",
      value: p.loadAndFirst,
      unit: "ms",
      note: "includes reading the 200-turn transcript, the state, git status and loading the tokenizer's rank table",
    },
    {
      name: "valarmind prompt --dry-run on the 200-turn session, end to end",
      value: dryRun.median_ms,
      unit: "ms",
      target: { max: 300 },
      note: `wall, median of ${dryRun.runs} (${dryRun.tool}), min ${dryRun.min_ms.toFixed(1)} ms`,
    },
    {
      name: "unchanged-prefix share, scripted 40-turn conversation, default settings",
      value: standard.all,
      unit: "ratio",
      target: { min: 0.85 },
      note: `average over ${standard.requests - 1} consecutive request pairs (tool-loop steps included); first request of each turn alone: ${standard.firstSteps.toFixed(3)}`,
    },
    {
      name: "unchanged-prefix share, same script, window in one piece before the state",
      value: singleWindow.all,
      unit: "ratio",
      note: `the architecture's first order, for comparison (first requests alone: ${singleWindow.firstSteps.toFixed(3)}); valarmind's order splits the window at its block boundary: ${MAIN_TURN_ORDER.join(" · ")} (ADR 0011)`,
    },
    {
      name: "a first request (no history): tokens",
      value: sample.manifest.total_tokens,
      unit: "tokens",
      note: `tools ${sample.manifest.items.filter((i) => i.type === "tool").reduce((n, i) => n + i.tokens, 0)}, core rules ${sample.manifest.items.find((i) => i.id === "core_rules")?.tokens ?? 0}`,
    },
    ...(await throughput(ctx)),
  ];
}
