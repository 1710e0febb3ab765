/**
 * `bun run bench [filter]`: runs every bench/*.bench.ts (or those whose name contains `filter`),
 * writes bench/results/<name>.json and rebuilds bench/RESULTS.md from all results files.
 * The contract for a bench file is in bench/harness.ts.
 */
import { buildJsBundle } from "../scripts/build.ts";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { cpus, tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";
import { median, withinTarget, type BenchContext, type BenchFunction, type BenchRow, type CommandTiming, type MeasureOptions } from "./harness.ts";

const repoRoot = resolve(import.meta.dir, "..");
const resultsDir = join(import.meta.dir, "results");

interface ResultFile {
  bench: string;
  measured_at: string;
  machine: { cpus: number; cpu_model: string; platform: string; bun: string; timing_tool: string };
  rows: BenchRow[];
}

const hyperfine = Bun.which("hyperfine");

async function measureCommand(argv: string[], options: MeasureOptions): Promise<CommandTiming> {
  const runs = options.runs ?? 20;
  const warmup = options.warmup ?? 3;
  const env = { ...process.env, NO_COLOR: "1", ...options.env };
  if (hyperfine) {
    const out = join(await mkdtemp(join(tmpdir(), "vm-bench-")), "hf.json");
    const quote = (a: string) => (/^[\w./=:@-]+$/.test(a) ? a : `'${a.replace(/'/g, "'\\''")}'`);
    const args = [hyperfine, "-N", "--style", "none", "--warmup", String(warmup), "--runs", String(runs), "--export-json", out];
    if (options.prepare) args.push("--prepare", options.prepare.map(quote).join(" "));
    args.push(argv.map(quote).join(" "));
    const proc = Bun.spawn(args, { cwd: options.cwd, env, stdout: "ignore", stderr: "pipe" });
    const [code, err] = await Promise.all([proc.exited, new Response(proc.stderr).text()]);
    if (code !== 0) throw new Error(`hyperfine failed for ${argv.join(" ")}: ${err}`);
    const report = (await Bun.file(out).json()) as { results: { times: number[]; exit_codes?: number[] }[] };
    await rm(join(out, ".."), { recursive: true, force: true });
    const times = (report.results[0]?.times ?? []).map((s) => s * 1000);
    return { median_ms: median(times), min_ms: Math.min(...times), max_ms: Math.max(...times), runs: times.length, tool: "hyperfine" };
  }
  const times: number[] = [];
  for (let i = 0; i < warmup + runs; i++) {
    if (options.prepare) await Bun.spawn(options.prepare, { cwd: options.cwd, env }).exited;
    const started = performance.now();
    const code = await Bun.spawn(argv, { cwd: options.cwd, env, stdout: "ignore", stderr: "ignore" }).exited;
    const elapsed = performance.now() - started;
    if (code !== 0) throw new Error(`${argv.join(" ")} exited with ${code}`);
    if (i >= warmup) times.push(elapsed);
  }
  return { median_ms: median(times), min_ms: Math.min(...times), max_ms: Math.max(...times), runs, tool: "spawn-loop" };
}

function formatValue(row: BenchRow): string {
  const v = row.unit === "ratio" ? row.value.toFixed(3) : row.unit === "ms" ? row.value.toFixed(1) : String(Math.round(row.value));
  return row.unit === "ratio" ? `${v}×` : `${v} ${row.unit}`;
}

function formatTarget(row: BenchRow): string {
  if (!row.target) return "";
  const parts = [];
  if (row.target.max !== undefined) parts.push(`≤ ${row.target.max}${row.unit === "ratio" ? "×" : ` ${row.unit}`}`);
  if (row.target.min !== undefined) parts.push(`≥ ${row.target.min}${row.unit === "ratio" ? "×" : ` ${row.unit}`}`);
  return parts.join(", ");
}

async function writeMarkdown(): Promise<void> {
  const files = (await readdir(resultsDir)).filter((f) => f.endsWith(".json")).sort();
  const sections: string[] = [
    "# Benchmark results",
    "",
    "Written by `bun run bench` (bench/run.ts) from bench/results/*.json. Do not edit by hand.",
  ];
  for (const file of files) {
    const result = (await Bun.file(join(resultsDir, file)).json()) as ResultFile;
    const m = result.machine;
    sections.push(
      "",
      `## ${result.bench}`,
      "",
      `Measured ${result.measured_at} on ${m.cpus}× ${m.cpu_model}, ${m.platform}, Bun ${m.bun}, timings by ${m.timing_tool} (median).`,
      "",
      "| measure | value | target | | note |",
      "|---|---:|---|---|---|",
      ...result.rows.map((row) => {
        const ok = withinTarget(row);
        return `| ${row.name} | ${formatValue(row)} | ${formatTarget(row)} | ${ok === undefined ? "" : ok ? "ok" : "**MISSED**"} | ${row.note ?? ""} |`;
      }),
    );
  }
  await Bun.write(join(import.meta.dir, "RESULTS.md"), `${sections.join("\n")}\n`);
}

const filter = process.argv[2];
const scratch: string[] = [];
// The JavaScript bundle bin/valarmind starts from, built as scripts/setup builds it (ADR 0086).
await buildJsBundle(join(repoRoot, "dist", "js"));
const ctx: BenchContext = {
  repoRoot,
  // The installed entry point, with its runtime settings (bin/valarmind, ADR 0065) and its bundle (ADR 0086), as users run it.
  cli: [join(repoRoot, "bin", "valarmind")],
  tempDir: async () => {
    const dir = await mkdtemp(join(tmpdir(), "vm-bench-"));
    scratch.push(dir);
    return dir;
  },
  measureCommand,
};

const benches = [...new Bun.Glob("*.bench.ts").scanSync({ cwd: import.meta.dir })].sort();
let failures = 0;
const broken: string[] = [];
try {
  for (const file of benches) {
    const name = basename(file, ".bench.ts");
    if (filter && !name.includes(filter)) continue;
    const mod = (await import(join(import.meta.dir, file))) as { run?: BenchFunction; default?: BenchFunction };
    const fn = mod.run ?? mod.default;
    if (!fn) throw new Error(`bench/${file} exports neither run() nor a default function (see bench/harness.ts)`);
    process.stdout.write(`bench ${name}...\n`);
    let rows: BenchRow[];
    try {
      rows = await fn(ctx);
    } catch (error) {
      // One broken bench must not hide the others' figures; its previous results file stays.
      broken.push(name);
      process.stderr.write(`bench ${name} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      continue;
    }
    const result: ResultFile = {
      bench: name,
      measured_at: new Date().toISOString(),
      machine: {
        cpus: cpus().length,
        cpu_model: cpus()[0]?.model.trim() ?? "unknown",
        platform: `${process.platform}-${process.arch}`,
        bun: Bun.version,
        timing_tool: hyperfine ? "hyperfine" : "spawn loop",
      },
      rows,
    };
    await Bun.write(join(resultsDir, `${name}.json`), `${JSON.stringify(result, null, 2)}\n`);
    for (const row of rows) {
      const ok = withinTarget(row);
      if (ok === false) failures++;
      process.stdout.write(`  ${row.name}: ${formatValue(row)}${row.target ? ` (target ${formatTarget(row)}: ${ok ? "ok" : "MISSED"})` : ""}\n`);
    }
  }
  await writeMarkdown();
} finally {
  await Promise.all(scratch.map((d) => rm(d, { recursive: true, force: true })));
}
process.stdout.write(`wrote bench/RESULTS.md${failures > 0 ? `; ${failures} target(s) missed` : ""}\n`);
if (broken.length > 0) {
  process.stderr.write(`bench failed: ${broken.join(", ")}\n`);
  process.exitCode = 1;
}
