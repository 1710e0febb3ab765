/**
 * Unsandboxed commands only: a process that left the command's process group (`setsid`, a
 * daemon) survives the group kill. Each command gets a marker in its environment; afterwards
 * /proc is scanned for processes that still carry it, so the output can say what is still
 * running. A process that clears its environment is not found: this is a report, not a guarantee.
 */
import { readdirSync, readFileSync } from "node:fs";

export const RUN_MARKER_VAR = "VALARMIND_SHELL_RUN";

export interface EscapedProcess {
  pid: number;
  command: string;
}

function readProc(pid: string, file: string): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/${file}`, "utf8");
  } catch {
    return undefined; // Gone, or not ours to read.
  }
}

export function findEscapedProcesses(marker: string): EscapedProcess[] {
  if (process.platform !== "linux") return [];
  const needle = `${RUN_MARKER_VAR}=${marker}`;
  const found: EscapedProcess[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const environ = readProc(entry, "environ");
    if (environ === undefined || !environ.split("\0").includes(needle)) continue;
    const command = (readProc(entry, "cmdline") ?? "").split("\0").filter((a) => a !== "").join(" ");
    found.push({ pid: Number(entry), command });
  }
  return found;
}

export function describeEscaped(escaped: readonly EscapedProcess[]): string | undefined {
  if (escaped.length === 0) return undefined;
  const list = escaped.map((p) => `${p.pid}: ${p.command.length > 100 ? `${p.command.slice(0, 97)}...` : p.command}`).join("\n");
  return (
    `${escaped.length} process(es) started by this command are still running ` +
    `(they left its process group, so they were not stopped with it):\n${list}`
  );
}

/**
 * In the sandbox, bwrap exits as soon as the command does and the kernel then kills what is left
 * in its PID namespace; this waits (up to `limitMs`) until that has happened, so nothing the
 * command started is still running when the call returns. Returns what is left after the limit.
 */
export async function awaitNamespaceEnd(marker: string, limitMs: number): Promise<EscapedProcess[]> {
  const deadline = performance.now() + limitMs;
  for (;;) {
    const left = findEscapedProcesses(marker);
    if (left.length === 0 || performance.now() >= deadline) return left;
    await Bun.sleep(5);
  }
}
