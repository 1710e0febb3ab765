/**
 * Issue 9: what the bubblewrap sandbox adds to one shell command. Median wall time of `bash -c
 * true` (not a login shell: the profile's cost would land on both sides), bare and inside bwrap
 * with run_shell's own argv;
 * the difference is the sandbox's cost per command (target ≤ 15 ms).
 */
import { bubblewrapArgs, probeBubblewrap } from "../src/sandbox/bubblewrap.ts";
import type { BenchContext, BenchRow } from "./harness.ts";

export async function run(ctx: BenchContext): Promise<BenchRow[]> {
  const probe = probeBubblewrap();
  if (!probe.available) return [];
  const root = await ctx.tempDir();
  const options = { cwd: root, runs: 30, warmup: 5 };
  const bare = await ctx.measureCommand(["bash", "-c", "true"], options);
  const sandboxed = await ctx.measureCommand([...bubblewrapArgs(probe.path, root, { mode: "workspace-write", network: false }), "bash", "-c", "true"], options);
  const note = `median of ${bare.runs} (${bare.tool})`;
  return [
    { name: "run_shell `true`, no sandbox (bash -c)", value: bare.median_ms, unit: "ms", note },
    { name: "run_shell `true` in bubblewrap", value: sandboxed.median_ms, unit: "ms", note },
    { name: "sandbox overhead per command", value: sandboxed.median_ms - bare.median_ms, unit: "ms", target: { max: 15 }, note: "bwrap median − bare median" },
  ];
}
