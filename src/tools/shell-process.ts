/**
 * Runs one `bash -lc` command in its own process group, captures stdout/stderr head+tail within a
 * byte cap, and ends the whole group on timeout or abort (TERM, then KILL after a grace period),
 * so children such as `npm test`'s workers do not outlive the call. In the sandbox the group is
 * bwrap's: killing it ends the command's PID namespace (--die-with-parent), setsid children included.
 */
export interface ShellRun {
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  /** Bytes dropped from the middle of each stream by the capture cap. */
  droppedBytes: number;
  timedOut: boolean;
  aborted: boolean;
  durationMs: number;
}

export interface ShellOptions {
  cwd: string;
  timeoutMs: number;
  /** Cap per stream (head half + tail half are kept). */
  maxCaptureBytes: number;
  signal: AbortSignal;
  env?: Record<string, string | undefined>;
  /** argv that wraps `bash -lc COMMAND` (the sandbox's bwrap and its options); none runs bash directly. */
  wrapper?: readonly string[];
}

/** How long TERM has before KILL, and how long pipes may stay open after bash itself exited. */
const KILL_GRACE_MS = 2000;
const PIPE_GRACE_MS = 500;

class CappedCapture {
  private head: Uint8Array[] = [];
  private headBytes = 0;
  private tail: Uint8Array[] = [];
  private tailBytes = 0;
  dropped = 0;
  constructor(private readonly cap: number) {}

  push(chunk: Uint8Array): void {
    const half = Math.floor(this.cap / 2);
    if (this.headBytes < half) {
      const take = chunk.subarray(0, half - this.headBytes);
      this.head.push(take);
      this.headBytes += take.length;
      chunk = chunk.subarray(take.length);
    }
    if (chunk.length === 0) return;
    this.tail.push(chunk);
    this.tailBytes += chunk.length;
    while (this.tailBytes > this.cap - half) {
      const first = this.tail[0];
      if (!first) break;
      const excess = this.tailBytes - (this.cap - half);
      if (first.length <= excess) {
        this.tail.shift();
        this.tailBytes -= first.length;
        this.dropped += first.length;
      } else {
        this.tail[0] = first.subarray(excess);
        this.tailBytes -= excess;
        this.dropped += excess;
      }
    }
  }

  text(): string {
    const decode = (parts: Uint8Array[]): string => Buffer.concat(parts).toString("utf8");
    if (this.dropped === 0) return decode([...this.head, ...this.tail]);
    return `${decode(this.head)}\n[… ${this.dropped} bytes of output dropped …]\n${decode(this.tail)}`;
  }
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: the group is already gone.
  }
}

async function drain(stream: ReadableStream<Uint8Array>, into: CappedCapture, stop: Promise<void>): Promise<void> {
  const reader = stream.getReader();
  const stopped = stop.then(() => "stop" as const);
  for (;;) {
    const next = await Promise.race([reader.read(), stopped]);
    if (next === "stop") {
      await reader.cancel().catch(() => undefined);
      return;
    }
    if (next.done) return;
    into.push(next.value);
  }
}

export async function runShellCommand(command: string, options: ShellOptions): Promise<ShellRun> {
  const started = performance.now();
  const out = new CappedCapture(options.maxCaptureBytes);
  const err = new CappedCapture(options.maxCaptureBytes);
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
  await Promise.all([drain(proc.stdout, out, pipesReleased), drain(proc.stderr, err, pipesReleased), exited]);
  const exitCode = await exited;
  clearTimeout(timer);
  options.signal.removeEventListener("abort", onAbort);
  clearTimeout(killTimer);
  clearTimeout(pipeTimer);
  releasePipes();
  return {
    exitCode: proc.signalCode ? null : exitCode,
    signal: proc.signalCode === null ? null : String(proc.signalCode),
    stdout: out.text(),
    stderr: err.text(),
    droppedBytes: out.dropped + err.dropped,
    timedOut,
    aborted,
    durationMs: Math.round(performance.now() - started),
  };
}
