/**
 * The peak resident memory of a child process, from the kernel's high-water mark (VmHWM in
 * /proc/PID/status, Linux), sampled until the child exits.
 *
 * Not `resourceUsage().maxRSS`: a child's ru_maxrss counts the pages it shared with its parent
 * between fork and exec, and it survives exec. Under `bun test` with hundreds of test files loaded
 * the parent is ~400 MB, so every child then "peaks" at ~400 MB whatever it does. VmHWM belongs
 * to the address space exec gave the child, so it is the child's own. It is monotonic, so a sample
 * taken late still holds a spike between samples; only what the child allocates in its last few
 * milliseconds can be missed.
 *
 *   const peak = watchPeakMemory(child.pid);
 *   await child.exited;
 *   expect(peak.stop()).toBeLessThan(300 * 1024 * 1024);
 */
import { readFileSync } from "node:fs";

export function watchPeakMemory(pid: number, everyMs = 5): { stop(): number } {
  let peak = 0;
  const sample = () => {
    try {
      const kb = Number(/VmHWM:\s+(\d+)\s*kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? "0");
      peak = Math.max(peak, kb * 1024);
    } catch {
      // The child has exited (or /proc is not there): keep the last peak.
    }
  };
  sample();
  const timer = setInterval(sample, everyMs);
  return {
    stop() {
      clearInterval(timer);
      return peak;
    },
  };
}
