/**
 * Issue 9: what the bubblewrap sandbox adds to one shell command. Median wall time of `bash -c
 * true` (not a login shell: the profile's cost would land on both sides), bare and inside bwrap
 * with run_shell's own argv, process limit included (as root: joining the command's pids cgroup
 * first; otherwise RLIMIT_NPROC set inside the user namespace); the difference is the sandbox's
 * cost per command (target ≤ 15 ms). Making and removing root's cgroup happens in valarmind's own
 * process, so it is timed on its own and added.
 */
import { bubblewrapArgs, probeBubblewrap } from "../src/sandbox/bubblewrap.ts";
import { DEFAULT_PROCESS_LIMIT, openCommandCgroup, sandboxProcessBound } from "../src/sandbox/process-limit.ts";
import type { BenchContext, BenchRow } from "./harness.ts";

export async function run(ctx: BenchContext): Promise<BenchRow[]> {
  const probe = probeBubblewrap();
  if (!probe.available) return [];
  const root = await ctx.tempDir();
  const options = { cwd: root, runs: 30, warmup: 5 };
  const bare = await ctx.measureCommand(["bash", "-c", "true"], options);
  const bound = sandboxProcessBound(DEFAULT_PROCESS_LIMIT, probe);
  const policy = { mode: "workspace-write" as const, network: false, ...(bound.kind === "rlimit" ? { processLimit: bound.limit } : {}) };
  const cgroup = bound.kind === "cgroup" ? openCommandCgroup(bound) : undefined;
  let sandboxed;
  try {
    sandboxed = await ctx.measureCommand([...(cgroup?.prefix ?? []), ...bubblewrapArgs(probe.path, root, policy), "bash", "-c", "true"], options);
  } finally {
    await cgroup?.close();
  }
  // As root, the other mechanism's argv too (it costs the same here; it only binds for other users).
  const rlimitArgv = [...bubblewrapArgs(probe.path, root, { mode: "workspace-write", network: false, processLimit: DEFAULT_PROCESS_LIMIT }), "bash", "-c", "true"];
  const withRlimit = bound.kind === "cgroup" ? await ctx.measureCommand(rlimitArgv, options) : undefined;
  let cgroupMs = 0;
  if (bound.kind === "cgroup") {
    const times: number[] = [];
    for (let i = 0; i < 50; i++) {
      const started = performance.now();
      await openCommandCgroup(bound).close();
      times.push(performance.now() - started);
    }
    cgroupMs = times.sort((a, b) => a - b)[Math.floor(times.length / 2)] ?? 0;
  }
  const note = `median of ${bare.runs} (${bare.tool})`;
  const how = bound.kind === "cgroup" ? `a pids cgroup per command (${bound.parent})` : bound.kind === "rlimit" ? "RLIMIT_NPROC in a user namespace" : `none here: ${bound.reason}`;
  const rows: BenchRow[] = [
    { name: "run_shell `true`, no sandbox (bash -c)", value: bare.median_ms, unit: "ms", note },
    { name: "run_shell `true` in bubblewrap, process limit included", value: sandboxed.median_ms, unit: "ms", note: `${note}; process limit: ${how}` },
    ...(bound.kind === "cgroup" ? [{ name: "making and removing the command's pids cgroup", value: Math.round(cgroupMs * 1000) / 1000, unit: "ms" as const, note: "median of 50, in process" }] : []),
    ...(withRlimit ? [{ name: "same, with the non-root limit instead (user namespace, RLIMIT_NPROC)", value: withRlimit.median_ms, unit: "ms" as const, note: `${note}; what a user other than root pays` }] : []),
    { name: "sandbox overhead per command", value: sandboxed.median_ms - bare.median_ms + cgroupMs, unit: "ms", target: { max: 15 }, note: "bwrap median − bare median (+ the cgroup's making and removing)" },
  ];
  return rows;
}
