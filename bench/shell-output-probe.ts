/**
 * One run_shell workload in a fresh process, for bench/shell-output.bench.ts: the registry's
 * run_shell in-process (default sandbox), so what the bench sees is valarmind's own resident
 * memory. Prints one JSON line: { ms, rssBefore, peakRss, rawBytes, forModelBytes, spool? }.
 * The peak is the kernel's high-water mark (VmHWM), so a spike between samples is not missed.
 *
 *   bun bench/shell-output-probe.ts lines-1g   `yes | head -c 1G` (1 GiB of short lines)
 *   bun bench/shell-output-probe.ts line-1g    one 1 GiB line
 *   bun bench/shell-output-probe.ts yes-5s     `yes` until a 5 s timeout kills it
 *   bun bench/shell-output-probe.ts line-5m    one 5 MiB line
 */
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createToolRegistry } from "../src/tools/registry.ts";

const WORKLOADS: Record<string, { command: string; timeout_ms?: number }> = {
  "lines-1g": { command: "yes | head -c 1G" },
  "line-1g": { command: "head -c 1G /dev/zero | tr '\\0' a" },
  "yes-5s": { command: "yes", timeout_ms: 5000 },
  "line-5m": { command: "head -c 5M /dev/zero | tr '\\0' a" },
};

const kind = process.argv[2] ?? "";
const workload = WORKLOADS[kind];
if (!workload) throw new Error(`shell-output-probe: unknown workload ${JSON.stringify(kind)} (see the comment at the top of bench/shell-output-probe.ts)`);

/** A field of /proc/self/status in bytes (Linux: "VmHWM:  123456 kB"). */
function statusBytes(field: "VmRSS" | "VmHWM"): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync("/proc/self/status", "utf8"));
  if (!match?.[1]) throw new Error(`no ${field} in /proc/self/status`);
  return Number(match[1]) * 1024;
}

/** Resets the high-water mark to the current RSS (Linux ≥ 4.0: writing 5 to clear_refs). */
function resetPeak(): void {
  writeFileSync("/proc/self/clear_refs", "5");
}

const root = await mkdtemp(join(tmpdir(), "vm-shell-output-"));
// Where a session's registry keeps full outputs (src/agent/session.ts).
const outputDir = join(root, ".valarmind", "sessions", "bench", "outputs");
const registry = createToolRegistry({ root, outputDir, settings: { approvals: "full-auto", toolOutputTokens: 2000, shellTimeoutMs: 120_000 } });
const signal = new AbortController().signal;
// A small call first, so the sandbox probe, the spawn machinery and the first allocations are in the baseline.
await registry.run({ callId: "warm", name: "run_shell", arguments: JSON.stringify({ command: "seq 1 1000" }) }, { signal });
Bun.gc(true);
resetPeak();
const rssBefore = statusBytes("VmRSS");
const started = performance.now();
const outcome = await registry.run({ callId: "c1", name: "run_shell", arguments: JSON.stringify(workload) }, { signal });
const ms = performance.now() - started;
const peakRss = statusBytes("VmHWM");
const spoolMatch = /\.valarmind\/sessions\/[^\s]+\.log|\/tmp\/[^\s]+\.log/.exec(outcome.forModel);
let spool: number | undefined;
if (spoolMatch) {
  try {
    spool = statSync(spoolMatch[0].startsWith("/") ? spoolMatch[0] : join(root, spoolMatch[0])).size;
  } catch {
    spool = undefined;
  }
}
process.stdout.write(
  `${JSON.stringify({ ms, rssBefore, peakRss, rawBytes: Buffer.byteLength(outcome.raw), forModelBytes: Buffer.byteLength(outcome.forModel), spool, head: outcome.forModel.slice(0, 300) })}\n`,
);
