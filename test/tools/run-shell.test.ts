import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { closeSync, constants, existsSync, openSync } from "node:fs";
import { open } from "node:fs/promises";
import { join } from "node:path";
import { createRunShellTool } from "../../src/tools/run-shell.ts";
import { runShellCommand } from "../../src/tools/shell-process.ts";
import { call, makeWorkspace, registryFor, removeWorkspaces } from "./temp-workspace.ts";

// Exact-output tests: the developer's login profile (pyenv's rehash, say, complaining about the
// sandbox's read-only home) must not add lines, so commands get an empty HOME.
const realHome = process.env.HOME;
beforeAll(() => {
  process.env.HOME = makeWorkspace();
});
afterAll(() => {
  process.env.HOME = realHome;
  removeWorkspaces();
});

/**
 * True when nobody has the fifo open for reading: a non-blocking open for writing then fails with
 * ENXIO. The commands below read the fifo on fd 0, which a dying process closes before its
 * stdout, and a call returns only after stdout is closed, so this is exact, not timing-dependent.
 */
function fifoHasNoReader(path: string): boolean {
  try {
    closeSync(openSync(path, constants.O_WRONLY | constants.O_NONBLOCK));
    return false;
  } catch (error) {
    if ((error as { code?: string }).code === "ENXIO") return true;
    throw error;
  }
}

async function mkfifo(path: string): Promise<void> {
  const made = Bun.spawnSync(["mkfifo", path]);
  if (made.exitCode !== 0) throw new Error(`mkfifo ${path} failed`);
}

describe("run_shell", () => {
  test("runs in the workspace root and reports exit code, stdout and stderr", async () => {
    const root = makeWorkspace({ "marker.txt": "" });
    const outcome = await call(registryFor(root), "run_shell", { command: "ls; echo oops >&2; exit 3" });
    expect(outcome.forModel).toBe("$ ls; echo oops >&2; exit 3\nexit code 3\nstdout:\nmarker.txt\nstderr:\noops");
    expect(outcome.isError).toBe(true);
    expect(outcome.summary).toMatch(/^ran `ls; echo oops >&2; exit 3` → exit 3 \(\d+\.\ds\)$/);
    const ok = await call(registryFor(root), "run_shell", { command: "true" });
    expect(ok.forModel).toBe("$ true\nexit code 0\n(no output)");
    expect(ok.isError).toBe(false);
  });

  test("stdin is closed, so a command waiting for input ends at once", async () => {
    const root = makeWorkspace();
    const outcome = await call(registryFor(root), "run_shell", { command: "cat; echo done" });
    expect(outcome.forModel).toContain("stdout:\ndone");
  });

  test("valarmind's API key is not in the command's environment", async () => {
    const root = makeWorkspace();
    const before = process.env.OPENAI_API_KEY;
    process.env.OPENAI_API_KEY = "sk-test-secret";
    try {
      const outcome = await call(registryFor(root), "run_shell", { command: 'echo "key=[${OPENAI_API_KEY:-}]"' });
      expect(outcome.forModel).toContain("key=[]");
    } finally {
      if (before === undefined) delete process.env.OPENAI_API_KEY;
      else process.env.OPENAI_API_KEY = before;
    }
  });

  test("a timeout kills the command and its children", async () => {
    const root = makeWorkspace();
    await mkfifo(join(root, "block"));
    const registry = registryFor(root, { tools: [createRunShellTool({ timeoutMs: 60_000 })] });
    // `cat < block` waits forever for a writer; only the timeout can end it. The `;` makes bash
    // fork, so cat is a child of bash rather than bash itself.
    const outcome = await call(registry, "run_shell", { command: "cat < block; echo unreachable", timeout_ms: 300 });
    expect(outcome.isError).toBe(true);
    expect(outcome.forModel).toContain("timed out after 300 ms; the command and its child processes were killed");
    expect(outcome.forModel).not.toContain("stdout:");
    expect(outcome.summary).toContain("→ timed out");
    expect(fifoHasNoReader(join(root, "block"))).toBe(true);
  });

  test("aborting the signal kills the process group and reports it", async () => {
    const root = makeWorkspace();
    const fifo = join(root, "block");
    await mkfifo(fifo);
    const controller = new AbortController();
    const running = call(registryFor(root), "run_shell", { command: "cat < block; echo unreachable" }, controller.signal);
    // Opening the write end completes once the command's cat has the read end: it is running.
    const writer = await open(fifo, "w");
    controller.abort();
    const outcome = await running;
    await writer.close();
    expect(outcome.isError).toBe(true);
    expect(outcome.forModel).toContain("aborted by the user; the command and its child processes were killed");
    expect(fifoHasNoReader(fifo)).toBe(true);
  });

  test("background processes left behind end when the command returns", async () => {
    const root = makeWorkspace();
    const fifo = join(root, "block");
    await mkfifo(fifo);
    const outcome = await call(registryFor(root), "run_shell", { command: "cat < block & echo started" });
    expect(outcome.forModel).toContain("stdout:\nstarted");
    expect(fifoHasNoReader(fifo)).toBe(true);
  });

  test("captured output keeps head and tail within the capture cap, with byte and line counts", async () => {
    const root = makeWorkspace();
    const registry = registryFor(root, { tools: [createRunShellTool({ timeoutMs: 10_000, maxCaptureBytes: 100 })] });
    const outcome = await call(registry, "run_shell", { command: "seq 1 1000" });
    expect(outcome.forModel).toMatch(/stdout \(3893 bytes, 1000 lines; first and last shown\):\n1\n2\n3\n/);
    expect(outcome.forModel).toMatch(/\[… \d+ bytes \(\d+ lines\) not shown …\]/);
    expect(outcome.forModel).toMatch(/999\n1000\n/);
    // No session directory here, so the model is told the middle is gone rather than given a path.
    expect(outcome.forModel).toContain("(the full output was not kept: no session directory)");
  });

  test("an aborted signal before the start runs nothing", async () => {
    const root = makeWorkspace();
    const controller = new AbortController();
    controller.abort();
    const outcome = await call(registryFor(root), "run_shell", { command: "touch ran" }, controller.signal);
    expect(outcome.isError).toBe(true);
    expect(existsSync(join(root, "ran"))).toBe(false);
  });
});

/** Unsandboxed, a process that left the group (setsid) survives bash and keeps the output pipes. */
describe("runShellCommand without the sandbox", () => {
  const run = (command: string) =>
    runShellCommand(command, { cwd: makeWorkspace(), timeoutMs: 60_000, maxCaptureBytes: 1000, signal: new AbortController().signal });
  // `up` exists once the process has left bash's group, so bash's exit cannot take it along.
  const untilUp = "until [ -e up ]; do sleep 0.01; done;";
  const pidIn = (text: string): number => Number(/pid=(\d+)/.exec(text)?.[1] ?? Number.NaN);
  const endProcess = (pid: number): void => {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  };

  test("a setsid process that holds the pipes silently does not keep the call waiting", async () => {
    const result = await run(`setsid sh -c 'touch up; exec sleep 300' & ${untilUp} echo pid=$!`);
    const pid = pidIn(result.stdout.head);
    endProcess(pid);
    expect(result.exitCode).toBe(0);
    expect(Number.isInteger(pid)).toBe(true);
  });

  test("a setsid process that floods the pipes does not keep the call waiting", async () => {
    const result = await run(`setsid sh -c 'echo first; touch up; exec yes' & ${untilUp} echo pid=$! >&2`);
    endProcess(pidIn(result.stderr.head));
    expect(result.exitCode).toBe(0);
    expect(result.stderr.head).toMatch(/^pid=\d+\n$/);
    expect(result.stdout.head.length + result.stdout.tail.length).toBeLessThanOrEqual(1000);
    expect(result.stdout.head).toStartWith("first\n");
  });
});
