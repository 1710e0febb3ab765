/**
 * Runs one `bash -lc` command in its own process group, keeps a bounded head and tail of stdout
 * and stderr in memory (and, given a spool, the full output on disk), and ends the whole group on
 * timeout or abort (TERM, then KILL after a grace period), so children such as `npm test`'s
 * workers do not outlive the call. In the sandbox the group is bwrap's: killing it ends the
 * command's PID namespace (--die-with-parent), setsid children included.
 */
import { closeSync, constants, mkdtempSync, openSync, readSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { errnoCode } from "../errors.ts";
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

/** Bytes per read: a Linux pipe's default capacity, so one read usually empties it. */
const READ_BYTES = 64 * 1024;
/** Reads per stream before yielding to the event loop (timers, the exit), so a flood cannot starve them. */
const READS_PER_TURN = 16;
/** After a poll that found nothing, the wait before the next doubles from 1 ms up to this. */
const MAX_POLL_WAIT_MS = 16;
/** A stream that keeps being empty is looked at every 2 ** this turns at most. */
const MAX_SKIP_POWER = 3;

/** A pipe for one output stream: valarmind's non-blocking read end and the command's write end. */
interface OutputPipe {
  readFd: number;
  writeFd: number;
}

/**
 * Two pipes for stdout and stderr, as FIFOs in a private (0700) temp directory that is removed as
 * soon as both ends are open. Why not Bun's `stdout: "pipe"`: its stream allocates a buffer per
 * chunk that the collector frees late (+30–55 MB for a 1 GiB output); a FIFO read with `readSync`
 * into one reused buffer costs that buffer. The read end is non-blocking, so nothing ever waits in
 * a read that a process which left the group (setsid) could keep from returning.
 */
async function openOutputPipes(): Promise<[OutputPipe, OutputPipe]> {
  const dir = mkdtempSync(join(tmpdir(), "valarmind-shell-"));
  const opened: number[] = [];
  try {
    const paths = [join(dir, "stdout"), join(dir, "stderr")] as const;
    const mkfifo = Bun.spawn(["mkfifo", "-m", "600", ...paths], { stdin: "ignore", stdout: "ignore", stderr: "pipe" });
    const [code, message] = await Promise.all([mkfifo.exited, new Response(mkfifo.stderr).text()]);
    if (code !== 0) {
      throw new Error(`run_shell could not create its output pipes in ${dir} (mkfifo exited ${code}: ${message.trim()}); check that mkfifo is on PATH and the temp directory (TMPDIR) is writable`);
    }
    const pipeOf = (path: string): OutputPipe => {
      // The read end first (a non-blocking read open does not wait for a writer), then the write
      // end, blocking as the command expects its stdout to be.
      const readFd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
      opened.push(readFd);
      const writeFd = openSync(path, constants.O_WRONLY | constants.O_NOFOLLOW);
      opened.push(writeFd);
      return { readFd, writeFd };
    };
    return [pipeOf(paths[0]), pipeOf(paths[1])];
  } catch (error) {
    for (const fd of opened) closeSync(fd);
    throw error;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Bytes read into `buffer`, 0 at end of stream (no writer left), -1 when nothing is there yet. */
function readAvailable(fd: number, buffer: Buffer): number {
  // An empty pipe throws EAGAIN; without a stack trace that error costs far less.
  const stackTraceLimit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return readSync(fd, buffer, 0, buffer.length, null);
  } catch (error) {
    const code = errnoCode(error);
    if (code === "EAGAIN" || code === "EWOULDBLOCK" || code === "EINTR") return -1;
    throw error;
  } finally {
    Error.stackTraceLimit = stackTraceLimit;
  }
}

interface PumpedStream {
  fd: number;
  /** Gets the reused buffer and how many bytes of it were read; must copy what it keeps. */
  take: (buffer: Buffer, length: number) => void;
  open: boolean;
  /** Turns in a row it was looked at and had nothing. */
  idle: number;
}

/**
 * Up to READS_PER_TURN reads of one stream; whether any brought data. A read that did not fill
 * the buffer emptied the pipe, so the turn ends there instead of with an EAGAIN.
 */
function readTurn(stream: PumpedStream, buffer: Buffer): boolean {
  let got = false;
  for (let i = 0; stream.open && i < READS_PER_TURN; i++) {
    const n = readAvailable(stream.fd, buffer);
    if (n < 0) break;
    if (n === 0) {
      stream.open = false;
      break;
    }
    stream.take(buffer, n);
    got = true;
    if (n < buffer.length) break;
  }
  return got;
}

/**
 * Reads both streams to their ends, or until `stop()`, through one reused buffer. Between reads
 * that find nothing it waits a turn, then up to MAX_POLL_WAIT_MS; `wake()` (the command exited)
 * ends a wait at once, so the last bytes and the end of stream are seen without that delay.
 */
class OutputPump {
  private stopped = false;
  private wakeWaiter: (() => void) | undefined;
  /** Set by wake(): the next waits start short again (the command's last writers are closing). */
  private woken = false;

  async run(streams: PumpedStream[]): Promise<void> {
    const buffer = Buffer.allocUnsafe(READ_BYTES);
    let idle = 0;
    for (let turn = 0; !this.stopped && streams.some((s) => s.open); turn++) {
      if (this.woken) for (const stream of streams) stream.idle = 0;
      let got = false;
      for (const stream of streams) {
        // A stream that was empty is looked at every 2nd, 4th, up to 8th turn: while the other
        // floods, its empty reads would be most of the reads.
        if (!stream.open || turn % 2 ** Math.min(stream.idle, MAX_SKIP_POWER) !== 0) continue;
        const gotHere = readTurn(stream, buffer);
        stream.idle = gotHere ? 0 : stream.idle + 1;
        got ||= gotHere;
      }
      // Data: look again on the next turn. Nothing: wait, so a fast reader does not spin on an
      // empty pipe (each empty read is a thrown EAGAIN, garbage like the chunks this avoids).
      idle = got || this.woken ? 0 : idle + 1;
      this.woken = false;
      await this.wait(got ? 0 : Math.min(MAX_POLL_WAIT_MS, 2 ** (idle - 1)));
    }
  }

  private wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        if (this.wakeWaiter === done) this.wakeWaiter = undefined;
        resolve();
      };
      const timer = ms === 0 ? undefined : setTimeout(done, ms);
      if (ms === 0) setImmediate(done);
      this.wakeWaiter = done;
    });
  }

  wake(): void {
    this.woken = true;
    this.wakeWaiter?.();
  }

  stop(): void {
    this.stopped = true;
    this.wake();
  }
}

export async function runShellCommand(command: string, options: ShellOptions): Promise<ShellRun> {
  const started = performance.now();
  const half = Math.floor(options.maxCaptureBytes / 2);
  const out = new HeadTailCapture(half, options.maxCaptureBytes - half);
  const err = new HeadTailCapture(half, options.maxCaptureBytes - half);
  const spool = options.spool;
  const takeInto = (capture: HeadTailCapture) => (buffer: Buffer, length: number): void => {
    capture.push(buffer, length);
    spool?.write(buffer, length);
  };
  const [outPipe, errPipe] = await openOutputPipes();
  let proc: ReturnType<typeof Bun.spawn>;
  try {
    proc = Bun.spawn([...(options.wrapper ?? []), "bash", "-lc", command], {
      cwd: options.cwd,
      stdin: "ignore",
      stdout: outPipe.writeFd,
      stderr: errPipe.writeFd,
      detached: true,
      env: options.env,
    });
  } catch (error) {
    for (const fd of [outPipe.readFd, errPipe.readFd]) closeSync(fd);
    throw error;
  } finally {
    // The command holds its own copies; ours would keep the pipes from ever reaching their end.
    closeSync(outPipe.writeFd);
    closeSync(errPipe.writeFd);
  }
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
  // period and are then no longer read.
  const pump = new OutputPump();
  let pipeTimer: ReturnType<typeof setTimeout> | undefined;
  const exited = proc.exited.then((code) => {
    killGroup(proc.pid, "SIGKILL");
    pump.wake();
    pipeTimer = setTimeout(() => pump.stop(), PIPE_GRACE_MS);
    return code;
  });
  try {
    await Promise.all([
      pump.run([
        { fd: outPipe.readFd, take: takeInto(out), open: true, idle: 0 },
        { fd: errPipe.readFd, take: takeInto(err), open: true, idle: 0 },
      ]),
      exited,
    ]);
  } catch (error) {
    // A read failed (not EAGAIN): nothing will read the command's output, so it ends now.
    killGroup(proc.pid, "SIGKILL");
    throw error;
  } finally {
    pump.stop();
    clearTimeout(pipeTimer);
    clearTimeout(timer);
    clearTimeout(killTimer);
    options.signal.removeEventListener("abort", onAbort);
    closeSync(outPipe.readFd);
    closeSync(errPipe.readFd);
  }
  const exitCode = await exited;
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
