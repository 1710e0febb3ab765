/**
 * run_shell: one `bash -lc` command in the workspace root, with a timeout, in the bubblewrap
 * sandbox (src/sandbox/) with an allowlisted environment. Without a usable sandbox every call
 * asks, even in full-auto, unless the user chose `sandbox: "off"`. The model gets the head and
 * tail of each stream with byte and line counts; a longer output is kept whole (up to a cap) in
 * the session's `outputs/` directory and the result names that file.
 */
import { randomUUID } from "node:crypto";
import { chmodSync, existsSync, lstatSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { bubblewrapArgs, defaultBubblewrapPath, probeBubblewrap, type SandboxMode } from "../sandbox/bubblewrap.ts";
import { awaitNamespaceEnd, describeEscaped, findEscapedProcesses, RUN_MARKER_VAR } from "../sandbox/escaped-processes.ts";
import { buildShellEnv } from "../sandbox/shell-env.ts";
import { DEFAULT_PROCESS_LIMIT, openCommandCgroup, sandboxProcessBound, type CommandCgroup, type ProcessBound } from "../sandbox/process-limit.ts";
import { toolText } from "./descriptions.ts";
import { describeError } from "../errors.ts";
import type { CapturedOutput } from "./shell-output-capture.ts";
import { ShellOutputSpool, SPOOL_LIMITS, type SpoolLimits, type SpoolReport } from "./shell-output-spool.ts";
import { runShellCommand, type ShellRun } from "./shell-process.ts";
import { Type, type Static } from "@sinclair/typebox";
import { defineTool, Nullable } from "./define-tool.ts";
import type { PreparedCall, Preparation, Tool, ToolContext, ToolResult } from "./types.ts";

/** The timeout bounds shown to the model come from settings, so the schema is made per tool. */
function runShellParams(defaultTimeoutMs: number, maxTimeoutMs: number) {
  return Type.Object(
    {
      command: Type.String({ minLength: 1 }),
      timeout_ms: Type.Optional(Nullable(Type.Integer({ minimum: 100, maximum: maxTimeoutMs, description: `default ${defaultTimeoutMs}` }))),
    },
    { additionalProperties: false },
  );
}

export type RunShellArgs = Static<ReturnType<typeof runShellParams>>;

export interface RunShellOptions {
  /** Default timeout (settings.shellTimeoutMs); a call may ask for less or up to `maxTimeoutMs`. */
  timeoutMs: number;
  maxTimeoutMs?: number;
  /** Bytes kept in memory per stream (head + tail); the rest is only on disk, if a spool directory is given. */
  maxCaptureBytes?: number;
  /** The on-disk copy's cap and the size below which no copy is written. */
  spoolLimits?: SpoolLimits;
  /** settings.sandbox (default workspace-write). */
  sandbox?: SandboxMode;
  /** settings.network: sandboxed commands share the host's network. */
  network?: boolean;
  /** settings.shellEnv: extra variable names a command receives. */
  shellEnv?: readonly string[];
  /** settings.shellProcessLimit: processes (threads count) a sandboxed command may have at once. */
  processLimit?: number;
  /** Where bwrap is (tests point it at a missing file to simulate a machine without it). */
  bwrapPath?: string;
}

export const SHELL_MAX_TIMEOUT_MS = 10 * 60 * 1000;
/** Per stream, in memory and in the transcript's raw result; the spool file holds the rest. */
export const SHELL_CAPTURE_BYTES = 256 * 1024;
/** read_file's size cap (READ_FILE_LIMITS.maxBytes): a larger spool is read with run_shell. */
const READ_FILE_MAX_BYTES = 5 * 1024 * 1024;
/** How long the kernel gets to empty a finished command's PID namespace before we report leftovers. */
const NAMESPACE_END_MS = 2000;

/**
 * How a call will run: in bwrap (its argv prefix, and how its processes are bounded), unsandboxed
 * by choice, or unsandboxed for want of bwrap.
 */
type Confinement = { kind: "sandbox"; wrapper: string[]; bound: ProcessBound } | { kind: "off" } | { kind: "unavailable"; reason: string };

function confinementFor(options: RunShellOptions, root: string): Confinement {
  const mode = options.sandbox ?? "workspace-write";
  if (mode === "off") return { kind: "off" };
  const probe = probeBubblewrap(options.bwrapPath ?? defaultBubblewrapPath());
  if (!probe.available) return { kind: "unavailable", reason: probe.reason };
  const bound = sandboxProcessBound(options.processLimit ?? DEFAULT_PROCESS_LIMIT, probe);
  const policy = { mode, network: options.network ?? false, ...(bound.kind === "rlimit" ? { processLimit: bound.limit } : {}) };
  return { kind: "sandbox", wrapper: bubblewrapArgs(probe.path, root, policy), bound };
}

/**
 * Root's bound is a cgroup made for this one command. If it cannot be made now (it could when
 * probed), the command still runs, sandboxed, and its result says it was not bounded.
 */
function openBound(confinement: Confinement): { cgroup?: CommandCgroup; note?: string } {
  if (confinement.kind !== "sandbox" || confinement.bound.kind !== "cgroup") return {};
  try {
    return { cgroup: openCommandCgroup(confinement.bound) };
  } catch (error) {
    return { note: `note: this command's processes were not limited (its pids cgroup could not be made: ${describeError(error)})` };
  }
}

function limitNote(cgroup: CommandCgroup | undefined): string | undefined {
  if (cgroup === undefined || !cgroup.hitLimit()) return undefined;
  return `note: this command reached the sandbox's limit of ${cgroup.limit} processes (shellProcessLimit); the forks past it failed`;
}

function unsandboxedWarning(reason: string): string {
  return (
    `${reason}, so this command would run without a sandbox, with your full privileges (any file, the network). ` +
    `Install bubblewrap (apt-get install bubblewrap), or set sandbox: "off" (--sandbox off) to run commands unsandboxed knowingly`
  );
}

/** Under Linux's 128 KiB limit for one argument, with room for bwrap's own. */
const MAX_COMMAND_BYTES = 120_000;

/** One command line carries at most 128 KiB (E2BIG): a longer command is refused before anyone is asked, not after. */
function tooLong(command: string): ToolResult | undefined {
  const bytes = Buffer.byteLength(command, "utf8");
  if (bytes <= MAX_COMMAND_BYTES) return undefined;
  const forModel = `Error: the command is ${bytes} bytes, more than one command line can carry (${MAX_COMMAND_BYTES}); nothing was run. Write the long part with write_file, then run it with a short command.`;
  return { forModel, summary: `run_shell: command too long (${bytes} bytes)`, isError: true };
}

/**
 * A sandboxed command in a folder without `.git/` can create one (`git init`) and, since only an
 * existing `.git/` is mounted read-only, leave a hook that git runs unsandboxed on the user's
 * first commit. Such hooks are made non-executable; what was done is said (undefined: nothing).
 */
function disarmNewHooks(root: string): string | undefined {
  const hooks = join(root, ".git", "hooks");
  let names: string[];
  try {
    names = readdirSync(hooks);
  } catch {
    return existsSync(join(root, ".git")) ? "note: this command created .git/; git runs its hooks outside the sandbox, so check .git/hooks and .git/config before your first commit" : undefined;
  }
  const disarmed: string[] = [];
  for (const name of names) {
    const path = join(hooks, name);
    try {
      const info = lstatSync(path);
      if (!info.isFile() || name.endsWith(".sample") || (info.mode & 0o111) === 0) continue;
      chmodSync(path, info.mode & ~0o111);
      disarmed.push(name);
    } catch {
      // Gone meanwhile: nothing to disarm.
    }
  }
  const note = "note: this command created .git/; git runs its hooks outside the sandbox";
  return disarmed.length === 0 ? `${note}, so check .git/config (core.hooksPath) before your first commit` : `${note}: ${disarmed.join(", ")} made non-executable (chmod +x to keep one after reading it)`;
}

function oneLine(command: string): string {
  const first = command.split("\n")[0] ?? "";
  const short = first.length > 80 ? `${first.slice(0, 77)}...` : first;
  return command.includes("\n") ? `${short} …` : short;
}

function status(run: ShellRun, timeoutMs: number): string {
  if (run.aborted) return "aborted by the user; the command and its child processes were killed";
  if (run.timedOut) return `timed out after ${timeoutMs} ms; the command and its child processes were killed`;
  if (run.exitCode === null) return `killed by signal ${run.signal ?? "unknown"}`;
  return `exit code ${run.exitCode}`;
}

const lines = (n: number): string => (n === 1 ? "1 line" : `${n} lines`);

function formatStream(name: string, stream: CapturedOutput): string | undefined {
  if (stream.bytes === 0) return undefined;
  if (stream.droppedBytes === 0) return `${name}:\n${stream.head.replace(/\n$/, "")}`;
  const gap = `[… ${stream.droppedBytes} bytes (${lines(stream.droppedLines)}) not shown …]`;
  return `${name} (${stream.bytes} bytes, ${lines(stream.lines)}; first and last shown):\n${stream.head.replace(/\n$/, "")}\n${gap}\n${stream.tail.replace(/\n$/, "")}`;
}

/** Where the full output is, for the model: a workspace path it can read, and how. */
function spoolNote(spool: SpoolReport, root: string, dropped: boolean): string | undefined {
  if (spool.kind === "none") return dropped ? "(the full output was not kept: no session directory)" : undefined;
  const rel = relative(root, spool.path);
  const shown = rel.startsWith("..") ? spool.path : rel;
  if (spool.kind === "failed") return `(the full output could not be kept in ${shown}: ${spool.reason})`;
  const lost = spool.totalBytes - spool.keptBytes;
  const kept = lost > 0 ? `its first ${spool.keptBytes} bytes; ${lost} more bytes were counted, not kept` : `${spool.keptBytes} bytes`;
  const how = spool.keptBytes <= READ_FILE_MAX_BYTES ? "read_file with a line range, or grep" : "grep, or sed -n / tail through run_shell";
  return `full output (stdout and stderr as they arrived): ${shown} (${kept}); read it with ${how}`;
}

export function formatShellRun(command: string, run: ShellRun, timeoutMs: number, root: string): string {
  const parts = [`$ ${command}`, status(run, timeoutMs)];
  const streams = [formatStream("stdout", run.stdout), formatStream("stderr", run.stderr)].filter((part) => part !== undefined);
  parts.push(...(streams.length > 0 ? streams : ["(no output)"]));
  const note = spoolNote(run.spool, root, run.stdout.droppedBytes + run.stderr.droppedBytes > 0);
  if (note !== undefined) parts.push(note);
  return parts.join("\n");
}

export function createRunShellTool(options: RunShellOptions): Tool {
  const maxTimeout = options.maxTimeoutMs ?? SHELL_MAX_TIMEOUT_MS;

  async function run(args: RunShellArgs, ctx: ToolContext, confinement: Confinement): Promise<ToolResult> {
    const timeoutMs = args.timeout_ms ?? options.timeoutMs;
    if (ctx.signal.aborted) return { forModel: "Aborted before the command started.", summary: "run_shell: aborted", isError: true };
    const marker = randomUUID();
    const hadGit = existsSync(join(ctx.root, ".git"));
    const spool = ctx.outputDir !== undefined ? new ShellOutputSpool(ctx.outputDir, ctx.callId ?? marker, options.spoolLimits ?? SPOOL_LIMITS) : undefined;
    const { cgroup, note: unbounded } = openBound(confinement);
    let result: ShellRun;
    let left: ReturnType<typeof findEscapedProcesses>;
    let limited: string | undefined;
    try {
      result = await runShellCommand(args.command, {
        cwd: ctx.root,
        timeoutMs,
        maxCaptureBytes: options.maxCaptureBytes ?? SHELL_CAPTURE_BYTES,
        signal: ctx.signal,
        env: { ...buildShellEnv(process.env, options.shellEnv ?? []), [RUN_MARKER_VAR]: marker },
        ...(confinement.kind === "sandbox" ? { wrapper: [...(cgroup?.prefix ?? []), ...confinement.wrapper] } : {}),
        ...(spool !== undefined ? { spool } : {}),
      });
      // In the sandbox the PID namespace is ending everything; outside it, say what is still running.
      left = confinement.kind === "sandbox" ? await awaitNamespaceEnd(marker, NAMESPACE_END_MS) : findEscapedProcesses(marker);
      limited = limitNote(cgroup);
    } finally {
      await cgroup?.close();
    }
    const notes = [describeEscaped(left), hadGit || confinement.kind !== "sandbox" ? undefined : disarmNewHooks(ctx.root), limited, unbounded];
    const escaped = notes.filter((note) => note !== undefined).join("\n") || undefined;
    const seconds = (result.durationMs / 1000).toFixed(1);
    const outcome = result.aborted ? "aborted" : result.timedOut ? "timed out" : result.exitCode === null ? `signal ${result.signal}` : `exit ${result.exitCode}`;
    const text = formatShellRun(args.command, result, timeoutMs, ctx.root);
    return {
      forModel: escaped === undefined ? text : `${text}\n${escaped}`,
      summary: `ran \`${oneLine(args.command)}\` → ${outcome} (${seconds}s)${confinement.kind === "sandbox" ? "" : " unsandboxed"}`,
      isError: result.aborted || result.timedOut || result.exitCode !== 0,
    };
  }

  return defineTool({
    name: "run_shell",
    description: toolText("run_shell"),
    kind: "shell",
    parameters: runShellParams(options.timeoutMs, maxTimeout),
    // A command names no paths the registry can know; its output is still worth keeping.
    workingSetPriority: 0.5,
    describe: (args) => `run \`${oneLine(args.command)}\``,
    async prepare(args, ctx): Promise<Preparation> {
      const refused = tooLong(args.command);
      if (refused) return { ready: false, result: refused };
      const confinement = confinementFor(options, ctx.root);
      const prepared: PreparedCall = { ready: true, kind: "shell", description: `run \`${oneLine(args.command)}\``, apply: () => run(args, ctx, confinement) };
      // What is approved is the whole command: a second line (\`curl … | sh\`) must be on screen too.
      if (oneLine(args.command) !== args.command) prepared.command = args.command;
      // Only a working read-only sandbox keeps a command from changing files no checkpoint sees.
      if (confinement.kind !== "sandbox" || (options.sandbox ?? "workspace-write") !== "read-only") prepared.untrackedEffects = args.command;
      if (confinement.kind === "unavailable") {
        prepared.escalate = unsandboxedWarning(confinement.reason);
        prepared.askEvenInFullAuto = true;
      }
      return prepared;
    },
    execute: async (args, ctx) => tooLong(args.command) ?? run(args, ctx, confinementFor(options, ctx.root)),
  });
}
