/**
 * Token-counting benchmarks (issue 9): one-word strings of 20 KB, 100 KB and 1 MB (the worst case
 * for a byte-pair merge: one pre-token), a 1 MB random word and a 300k-character CJK line (giant
 * pre-tokens that nothing repeats in, so no cache helps), a 300 KB single line of mixed text, ~1 MB of ordinary
 * source, a command printing one 300 KB line (run_shell through the registry's truncation and the
 * prompt's shortening), `valarmind compact` with a 100 KB one-word goal, and the grep tool's JS
 * fallback. Each workload runs in a fresh process (bench/tokens-probe.ts) under the interpreter-only
 * JIT that bin/valarmind selects and, for ADR 0065's comparison, under Bun's default tiers. Every
 * run is killed after TIMEOUT_MS and recorded as "> N s", so a superlinear case cannot hang the bench.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { serializeState } from "../src/state/store.ts";
import { state20x30 } from "../test/state/state-fixtures.ts";
import { median, type BenchContext, type BenchRow } from "./harness.ts";

const TIMEOUT_MS = 20_000;
type Jit = "interpreter" | "default";

interface Outcome {
  ms: number;
  timedOut: boolean;
  tokens?: number;
  note?: string;
}

const jitEnv = (jit: Jit): Record<string, string> => ({ BUN_JSC_useBaselineJIT: jit === "interpreter" ? "0" : "1" });

async function spawnTimed(argv: string[], cwd: string, jit: Jit): Promise<{ out: string; err: string; code: number | null; ms: number; timedOut: boolean }> {
  const started = performance.now();
  const proc = Bun.spawn(argv, { cwd, stdout: "pipe", stderr: "pipe", env: { ...process.env, NO_COLOR: "1", ...jitEnv(jit) }, timeout: TIMEOUT_MS, killSignal: "SIGKILL" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  const ms = performance.now() - started;
  return { out, err, code, ms, timedOut: proc.signalCode === "SIGKILL" };
}

async function probe(ctx: BenchContext, args: string[], jit: Jit): Promise<Outcome> {
  const run = await spawnTimed([process.execPath, join(ctx.repoRoot, "bench/tokens-probe.ts"), ...args], ctx.repoRoot, jit);
  if (run.timedOut) return { ms: TIMEOUT_MS, timedOut: true };
  if (run.code !== 0) throw new Error(`tokens-probe ${args.join(" ")} failed: ${run.err}`);
  const parsed = JSON.parse(run.out.trim().split("\n").at(-1) ?? "{}") as { ms: number; tokens?: number; note?: string };
  return { ...parsed, timedOut: false };
}

/** Median of `runs` probes; stops at the first timeout. */
async function probeMedian(ctx: BenchContext, args: string[], jit: Jit, runs: number): Promise<Outcome> {
  const outcomes: Outcome[] = [];
  for (let i = 0; i < runs; i++) {
    const outcome = await probe(ctx, args, jit);
    if (outcome.timedOut) return outcome;
    outcomes.push(outcome);
  }
  const first = outcomes[0] ?? { ms: Number.NaN, timedOut: false };
  return { ...first, ms: median(outcomes.map((o) => o.ms)) };
}

function row(name: string, outcome: Outcome, extra: { target?: { max: number }; note?: string } = {}): BenchRow {
  const notes = [outcome.timedOut ? `> ${TIMEOUT_MS / 1000} s (killed)` : undefined, outcome.tokens !== undefined ? `${outcome.tokens} tokens` : undefined, outcome.note, extra.note];
  const result: BenchRow = { name, value: outcome.ms, unit: "ms", note: notes.filter((n) => n !== undefined).join("; ") };
  if (extra.target) result.target = extra.target;
  return result;
}

/** `valarmind compact` (bin/valarmind, so the interpreter-only JIT) on a state whose goal is one 100 KB word. */
async function compactLongGoal(ctx: BenchContext): Promise<Outcome> {
  const dir = await ctx.tempDir();
  await mkdir(join(dir, ".valarmind/memory"), { recursive: true });
  const state = state20x30();
  state.goal = "a".repeat(100_000);
  await writeFile(join(dir, ".valarmind/memory/state.json"), serializeState(state));
  const times: number[] = [];
  for (let i = 0; i < 3; i++) {
    const run = await spawnTimed([...ctx.cli, "compact", "--max-tokens", "100000"], dir, "interpreter");
    if (run.timedOut) return { ms: TIMEOUT_MS, timedOut: true };
    if (run.code !== 0) throw new Error(`valarmind compact failed: ${run.err}`);
    times.push(run.ms);
  }
  return { ms: median(times), timedOut: false, note: "bin/valarmind, whole process, median of 3" };
}

export async function run(ctx: BenchContext): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const workloads: { name: string; args: string[]; runs: number; target?: { max: number } }[] = [
    { name: "count one 20 KB word", args: ["word", "20000"], runs: 3 },
    { name: "count one 100 KB word", args: ["word", "100000"], runs: 3 },
    { name: "count one 1 MB word", args: ["word", "1000000"], runs: 3, target: { max: 1000 } },
    { name: "count one 1 MB word of random letters (nothing repeats)", args: ["random-word", "1000000"], runs: 3 },
    { name: "count one line of 300k CJK characters (one 900 KB pre-token)", args: ["cjk-line", "300000"], runs: 3 },
    { name: "count a 300 KB single line of mixed text", args: ["mixed-line", "300000"], runs: 3 },
    { name: "count ~1 MB of source text", args: ["source"], runs: 5 },
    { name: "run_shell printing one 300 KB line → answer for the model", args: ["shell-line", "300000"], runs: 3, target: { max: 3000 } },
    { name: "grep tool, JS fallback, this repository", args: ["grep-js"], runs: 5 },
  ];
  for (const jit of ["interpreter", "default"] as const) {
    for (const w of workloads) {
      const outcome = await probeMedian(ctx, w.args, jit, w.runs);
      const extra = jit === "interpreter" && w.target ? { target: w.target } : {};
      rows.push(row(`${w.name} (${jit === "interpreter" ? "interpreter only, as bin/valarmind" : "Bun default JIT tiers"})`, outcome, extra));
    }
  }
  rows.push(row("valarmind compact, 100 KB one-word goal", await compactLongGoal(ctx), { target: { max: 3000 } }));
  return rows;
}
