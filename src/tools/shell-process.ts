/**
 * Runs one `bash -lc` command in its own process group, keeps a bounded head and tail of stdout
 * and stderr in memory (and, given a spool, the full output on disk), and ends the whole group on
 * timeout or abort (TERM, then KILL after a grace period), so children such as `npm test`'s
 * workers do not outlive the call. In the sandbox the group is bwrap's: killing it ends the
 * command's PID namespace (--die-with-parent), setsid children included.
 */
import { HeadTailCapture, type CapturedOutput } from "./shell-output-capture.ts";
import type { ShellOutputSpool, SpoolReport } from "./shell-output-spool.ts";

export interface ShellRun {
  exitCode: number | null;
  signal: string | null;
  stdout: CapturedOutput;
  stderr: CapturedOutput;
  /** Where the full output went, if a spool was given. */
  spool: SpoolReport;
  timedOut: boolean;
  aborted: boolean;
  durationMs: number;
}

export interface ShellOptions {
  cwd: string;
  timeoutMs: number;
  /** Bytes kept in memory per stream (head half + tail half). */
  maxCaptureBytes: number;
  signal: AbortSignal;
  env?: Record<string, string | undefined>;
  /** argv that wraps `bash -lc COMMAND` (the sandbox's bwrap and its options); none runs bash directly. */
  wrapper?: readonly string[];
  /** Receives every byte of both streams as it arrives. */
  spool?: ShellOutputSpool;
}

/** How long TERM has before KILL, and how long pipes may stay open after bash itself exited. */
const KILL_GRACE_MS = 2000;
const PIPE_GRACE_MS = 500;

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: the group is already gone.
  }
}

/**
 * Reads `stream` to its end or until `stop`. `stop` gets one reaction that cancels the reader (which
 * ends a pending read): racing every read against it would add a reaction per read, each keeping
 * its chunk reachable until `stop` settles — how `yes` once grew valarmind to gigabytes.
 */
async function drain(stream: ReadableStream<Uint8Array>, take: (chunk: Uint8Array) => void, stop: Promise<void>): Promise<void> {
  const reader = stream.getReader();
  let stopped = false;
  void stop.then(() => {
    stopped = true;
    return reader.cancel().catch(() => undefined);
  });
  for (;;) {
    const next = await reader.read();
    if (next.done || stopped) return;
    take(next.value);
  }
}

export async function runShellCommand(command: string, options: ShellOptions): Promise<ShellRun> {
  const started = performance.now();
  const half = Math.floor(options.maxCaptureBytes / 2);
  const out = new HeadTailCapture(half, options.maxCaptureBytes - half);
  const err = new HeadTailCapture(half, options.maxCaptureBytes - half);
  const spool = options.spool;
  const takeInto = (capture: HeadTailCapture) => (chunk: Uint8Array): void => {
    capture.push(chunk);
    spool?.write(chunk);
  };
  const proc = Bun.spawn([...(options.wrapper ?? []), "bash", "-lc", command], {
    cwd: options.cwd,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
    detached: true,
    env: options.env,
  });
  let timedOut = false;
  let aborted = false;
  let killTimer: ReturnType<typeof setTimeout> | undefined;
  const end = (): void => {
    killGroup(proc.pid, "SIGTERM");
    killTimer ??= setTimeout(() => killGroup(proc.pid, "SIGKILL"), KILL_GRACE_MS);
  };
  const onAbort = (): void => {
    aborted = true;
    end();
  };
  if (options.signal.aborted) onAbort();
  else options.signal.addEventListener("abort", onAbort, { once: true });
  const timer = setTimeout(() => {
    timedOut = true;
    end();
  }, options.timeoutMs);

  // When bash exits, whatever it left running in its group (background jobs) ends with it. A
  // process that left the group (setsid) may still hold the pipes open: they get a short grace
  // period and are then closed.
  let releasePipes: () => void = () => undefined;
  const pipesReleased = new Promise<void>((resolve) => (releasePipes = resolve));
  let pipeTimer: ReturnType<typeof setTimeout> | undefined;
  const exited = proc.exited.then((code) => {
    killGroup(proc.pid, "SIGKILL");
    pipeTimer = setTimeout(releasePipes, PIPE_GRACE_MS);
    return code;
  });
  await Promise.all([drain(proc.stdout, takeInto(out), pipesReleased), drain(proc.stderr, takeInto(err), pipesReleased), exited]);
  const exitCode = await exited;
  clearTimeout(timer);
  options.signal.removeEventListener("abort", onAbort);
  clearTimeout(killTimer);
  clearTimeout(pipeTimer);
  releasePipes();
  return {
    exitCode: proc.signalCode ? null : exitCode,
    signal: proc.signalCode === null ? null : String(proc.signalCode),
    stdout: out.result(),
    stderr: err.result(),
    spool: spool?.finish() ?? { kind: "none" },
    timedOut,
    aborted,
    durationMs: Math.round(performance.now() - started),
  };
}
