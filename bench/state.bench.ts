/**
 * Working-state benchmarks (issue 2 targets): CLI startup, `compact` on the 20-decision/30-task
 * state and on a 500-item stress state, the tokenizer's load, and tokens of JSON vs the TOON
 * projection. Timings are wall-clock medians of fresh processes.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { countTokens } from "../src/tokens/tokenizer.ts";
import { serializeState } from "../src/state/store.ts";
import { encodeStateToon } from "../src/state/toon.ts";
import type { WorkingState } from "../src/state/schema.ts";
import { state20x30, stress500 } from "../test/state/state-fixtures.ts";
import { median, type BenchContext, type BenchRow } from "./harness.ts";

async function workspaceWith(ctx: BenchContext, state: WorkingState): Promise<string> {
  const dir = await ctx.tempDir();
  await mkdir(join(dir, ".valarmind/memory"), { recursive: true });
  await writeFile(join(dir, ".valarmind/memory/state.json"), serializeState(state));
  return dir;
}

/** Milliseconds a fresh process spends importing and first using a tokenizer (median of `runs`). */
async function tokenizerLoad(ctx: BenchContext, script: string, runs = 7): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const proc = Bun.spawn([process.execPath, "-e", script], { cwd: ctx.repoRoot, stdout: "pipe", stderr: "inherit" });
    const out = await new Response(proc.stdout).text();
    await proc.exited;
    samples.push(Number(out.trim()));
  }
  return median(samples);
}

async function tokenRows(label: string, state: WorkingState): Promise<BenchRow[]> {
  const pretty = await countTokens(serializeState(state));
  const compact = await countTokens(JSON.stringify(state));
  const capped = await encodeStateToon(state);
  const uncapped = await encodeStateToon(state, { maxTokens: Number.MAX_SAFE_INTEGER });
  const is20x30 = label === "20+30";
  return [
    { name: `${label}: tokens, state.json pretty`, value: pretty, unit: "tokens" },
    { name: `${label}: tokens, state.json compact`, value: compact, unit: "tokens" },
    {
      name: `${label}: tokens, TOON projection (capped)`,
      value: capped.tokens,
      unit: "tokens",
      target: { max: 750 },
      note: `${capped.omitted.length} left out (${capped.omitted.slice(0, 3).join(", ")}${capped.omitted.length > 3 ? ", …" : ""})`,
    },
    {
      name: `${label}: TOON (capped) / compact JSON`,
      value: capped.tokens / compact,
      unit: "ratio",
      ...(is20x30 ? { target: { max: 0.7 } } : {}),
    },
    {
      name: `${label}: TOON of the whole projection (no cap) / compact JSON`,
      value: uncapped.tokens / compact,
      unit: "ratio",
      note: `${uncapped.tokens} tokens: done tasks and bookkeeping dropped, then TOON`,
    },
    {
      name: `${label}: TOON / compact JSON of the same projection`,
      value: uncapped.tokens / (await countTokens(JSON.stringify(uncapped.projection))),
      unit: "ratio",
      note: "the encoding's own gain",
    },
  ];
}

export async function run(ctx: BenchContext): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const empty = await ctx.tempDir();
  const version = await ctx.measureCommand([...ctx.cli, "--version"], { cwd: empty, runs: 30, warmup: 5 });
  rows.push({ name: "valarmind --version", value: version.median_ms, unit: "ms", target: { max: 50 }, note: `median of ${version.runs}, min ${version.min_ms.toFixed(1)}` });

  const mid = await workspaceWith(ctx, state20x30());
  const removeToon = ["rm", "-f", join(mid, ".valarmind/memory/state.toon")];
  const compact = await ctx.measureCommand([...ctx.cli, "compact"], { cwd: mid, runs: 30, warmup: 5, prepare: removeToon });
  rows.push({ name: "valarmind compact, 20 decisions + 30 tasks", value: compact.median_ms, unit: "ms", target: { max: 150 }, note: `writes state.toon each run; median of ${compact.runs}` });
  const check = await ctx.measureCommand([...ctx.cli, "compact", "--check"], { cwd: mid, runs: 20 });
  rows.push({ name: "valarmind compact --check, 20+30 (up to date)", value: check.median_ms, unit: "ms" });

  const coldCache = await ctx.tempDir();
  const cold = await ctx.measureCommand([...ctx.cli, "compact"], {
    cwd: mid,
    runs: 10,
    warmup: 1,
    env: { VALARMIND_CACHE_DIR: coldCache },
    prepare: ["rm", "-rf", coldCache, join(mid, ".valarmind/memory/state.toon")],
  });
  rows.push({ name: "valarmind compact, 20+30, tokenizer cache cold", value: cold.median_ms, unit: "ms", note: "first run on a machine: builds the o200k table once" });

  const big = await workspaceWith(ctx, stress500());
  const stress = await ctx.measureCommand([...ctx.cli, "compact"], { cwd: big, runs: 15, prepare: ["rm", "-f", join(big, ".valarmind/memory/state.toon")] });
  rows.push({ name: "valarmind compact, 500-item stress state", value: stress.median_ms, unit: "ms", note: "200 decisions + 300 tasks" });

  const add = await ctx.measureCommand([...ctx.cli, "state", "task", "add", "bench task"], { cwd: mid, runs: 20 });
  rows.push({ name: "valarmind state task add (lock + validate + fsync)", value: add.median_ms, unit: "ms" });

  const timed = (body: string) => `const t=performance.now(); ${body}; console.log(performance.now()-t)`;
  rows.push({
    name: "tokenizer load: gpt-tokenizer o200k module",
    value: await tokenizerLoad(ctx, timed(`const m = await import("gpt-tokenizer/encoding/o200k_base"); m.countTokens("hello world")`)),
    unit: "ms",
    note: "import + first count in a fresh process",
  });
  rows.push({
    name: "tokenizer load: valarmind cached rank table",
    value: await tokenizerLoad(ctx, timed(`const m = await import("./src/tokens/tokenizer.ts"); await m.countTokens("hello world")`)),
    unit: "ms",
    note: "same counts (test/tokens/o200k-count.test.ts)",
  });

  for (const [label, state] of [["20+30", state20x30()], ["500-item", stress500()]] as const) {
    await encodeStateToon(state);
    const samples: number[] = [];
    for (let i = 0; i < 50; i++) {
      const started = performance.now();
      await encodeStateToon(state);
      samples.push(performance.now() - started);
    }
    rows.push({ name: `${label}: encodeStateToon in process (per turn)`, value: median(samples), unit: "ms", note: "warm, median of 50" });
  }
  rows.push(...(await tokenRows("20+30", state20x30())), ...(await tokenRows("500-item", stress500())));
  return rows;
}
