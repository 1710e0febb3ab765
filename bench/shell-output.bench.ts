/**
 * Issue 9: what a command's output costs valarmind, whatever the command prints. Each workload
 * runs the registry's run_shell in a fresh process (bench/shell-output-probe.ts) under
 * bin/valarmind's runtime settings (interpreter-only JIT, ADR 0065), in the default sandbox, with a
 * session output directory. Reported: the peak resident memory added by the call (kernel
 * high-water mark minus the resident size before it), the time to the answer, the transcript's
 * raw result and the spool file's size. "Before" figures in the notes are the same probe on the
 * code before the spool (every chunk stayed referenced until the command ended).
 */
import { join } from "node:path";
import { median, type BenchContext, type BenchRow } from "./harness.ts";
import { probeBubblewrap } from "../src/sandbox/bubblewrap.ts";

const MB = 1024 * 1024;
const TIMEOUT_MS = 120_000;
const RUNS = 3;

interface ProbeResult {
  ms: number;
  rssBefore: number;
  peakRss: number;
  rawBytes: number;
  forModelBytes: number;
  spool?: number;
}

interface Workload {
  kind: string;
  label: string;
  /** Measured on the code before this change (commit 182e749), same probe and machine. */
  before: string;
}

const WORKLOADS: Workload[] = [
  { kind: "lines-1g", label: "`yes | head -c 1G` (1 GiB of 2-byte lines)", before: "before: +1104 MB, 2.8 s" },
  { kind: "line-1g", label: "one 1 GiB line", before: "before: +1062 MB, 2.4 s" },
  { kind: "yes-5s", label: "`yes` until its 5 s timeout", before: "before: +2035 MB" },
  { kind: "line-5m", label: "one 5 MiB line", before: "before: +10 MB, 96 ms; the model saw none of the line" },
];

function isProbeResult(value: unknown): value is ProbeResult {
  return typeof value === "object" && value !== null && "ms" in value && "peakRss" in value && "rssBefore" in value && "rawBytes" in value;
}

async function probe(ctx: BenchContext, kind: string): Promise<ProbeResult> {
  const argv = [process.execPath, "--no-env-file", `--config=${join(ctx.repoRoot, "bunfig.toml")}`, join(ctx.repoRoot, "bench/shell-output-probe.ts"), kind];
  const proc = Bun.spawn(argv, {
    cwd: ctx.repoRoot,
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, NO_COLOR: "1", BUN_JSC_useBaselineJIT: "0" },
    timeout: TIMEOUT_MS,
    killSignal: "SIGKILL",
  });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`shell-output-probe ${kind} failed (exit ${code}): ${err}`);
  const parsed: unknown = JSON.parse(out.trim().split("\n").pop() ?? "");
  if (!isProbeResult(parsed)) throw new Error(`shell-output-probe ${kind} printed ${out}`);
  return parsed;
}

export async function run(ctx: BenchContext): Promise<BenchRow[]> {
  if (!probeBubblewrap().available) return [];
  const rows: BenchRow[] = [];
  for (const w of WORKLOADS) {
    const results: ProbeResult[] = [];
    for (let i = 0; i < RUNS; i++) results.push(await probe(ctx, w.kind));
    const added = Math.max(...results.map((r) => r.peakRss - r.rssBefore));
    const ms = median(results.map((r) => r.ms));
    const last = results[results.length - 1];
    rows.push(
      {
        name: `${w.label}: resident memory added (peak)`,
        value: added,
        unit: "bytes",
        target: { max: 8 * MB },
        note: `${(added / MB).toFixed(1)} MB, worst of ${RUNS}; ${w.before}`,
      },
      { name: `${w.label}: time to the answer`, value: ms, unit: "ms", note: `median of ${RUNS}` },
      {
        name: `${w.label}: raw result in the transcript`,
        value: last?.rawBytes ?? 0,
        unit: "bytes",
        target: { max: 600 * 1024 },
        note: `the model saw ${last?.forModelBytes ?? 0} bytes; spool file ${last?.spool ?? 0} bytes (64 MiB cap)`,
      },
    );
  }
  return rows;
}
