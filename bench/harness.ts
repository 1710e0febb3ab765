/**
 * Benchmark contract (`bun run bench`, see bench/run.ts).
 *
 * Put a file `bench/<name>.bench.ts` that exports `run(ctx: BenchContext): Promise<BenchRow[]>`
 * (the default export works too). The runner calls it, writes `bench/results/<name>.json`, and
 * rebuilds `bench/RESULTS.md` from every results file. One row is one measured figure:
 *
 *   { name: "valarmind --version", value: 23.1, unit: "ms", target: { max: 50 }, note: "median of 30" }
 *
 * `target` (optional) is what the docs promise; the table marks each row ok / MISSED. Use
 * `ctx.measureCommand` for wall-clock timings of a process (hyperfine when installed, else a
 * spawn loop; both report the median), `ctx.tempDir()` for scratch directories (removed after
 * the run), and `ctx.cli` to run valarmind itself. Keep timings out of tests: they live here.
 */
export type BenchUnit = "ms" | "tokens" | "ratio" | "bytes" | "count";

export interface BenchRow {
  name: string;
  value: number;
  unit: BenchUnit;
  target?: { max?: number; min?: number };
  note?: string;
}

export interface CommandTiming {
  median_ms: number;
  min_ms: number;
  max_ms: number;
  runs: number;
  tool: "hyperfine" | "spawn-loop";
}

export interface MeasureOptions {
  cwd: string;
  env?: Record<string, string>;
  runs?: number;
  warmup?: number;
  /** Run before every timed run (argv, no shell), e.g. ["rm", "-f", "out.toon"]. */
  prepare?: string[];
}

export interface BenchContext {
  repoRoot: string;
  /** argv prefix that runs the CLI as users do: [bin/valarmind]. */
  cli: string[];
  tempDir(): Promise<string>;
  measureCommand(argv: string[], options: MeasureOptions): Promise<CommandTiming>;
}

export type BenchFunction = (ctx: BenchContext) => Promise<BenchRow[]>;

export function withinTarget(row: BenchRow): boolean | undefined {
  if (!row.target) return undefined;
  if (row.target.max !== undefined && row.value > row.target.max) return false;
  if (row.target.min !== undefined && row.value < row.target.min) return false;
  return true;
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const at = (i: number) => sorted[i] ?? Number.NaN;
  return sorted.length % 2 === 1 ? at(mid) : (at(mid - 1) + at(mid)) / 2;
}
