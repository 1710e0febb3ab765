/**
 * run_shell: one `bash -lc` command in the workspace root, with a timeout and an output cap, in
 * the bubblewrap sandbox (src/sandbox/) with an allowlisted environment. Without a usable sandbox
 * every call asks, even in full-auto, unless the user chose `sandbox: "off"`.
 */
import { randomUUID } from "node:crypto";
import { bubblewrapArgs, defaultBubblewrapPath, probeBubblewrap, type SandboxMode } from "../sandbox/bubblewrap.ts";
import { awaitNamespaceEnd, describeEscaped, findEscapedProcesses, RUN_MARKER_VAR } from "../sandbox/escaped-processes.ts";
import { buildShellEnv } from "../sandbox/shell-env.ts";
import { toolText } from "./descriptions.ts";
import { runShellCommand, type ShellRun } from "./shell-process.ts";
import type { PreparedCall, Tool, ToolContext, ToolResult } from "./types.ts";

export type RunShellArgs = { command: string; timeout_ms?: number };

export interface RunShellOptions {
  /** Default timeout (settings.shellTimeoutMs); a call may ask for less or up to `maxTimeoutMs`. */
  timeoutMs: number;
  maxTimeoutMs?: number;
  /** Bytes kept per stream (head + tail); the rest is dropped before central truncation. */
  maxCaptureBytes?: number;
  /** settings.sandbox (default workspace-write). */
  sandbox?: SandboxMode;
  /** settings.network: sandboxed commands share the host's network. */
  network?: boolean;
  /** settings.shellEnv: extra variable names a command receives. */
  shellEnv?: readonly string[];
  /** Where bwrap is (tests point it at a missing file to simulate a machine without it). */
  bwrapPath?: string;
}

export const SHELL_MAX_TIMEOUT_MS = 10 * 60 * 1000;
export const SHELL_CAPTURE_BYTES = 1024 * 1024;
/** How long the kernel gets to empty a finished command's PID namespace before we report leftovers. */
const NAMESPACE_END_MS = 2000;

/** How a call will run: in bwrap (its argv prefix), unsandboxed by choice, or unsandboxed for want of bwrap. */
type Confinement = { kind: "sandbox"; wrapper: string[] } | { kind: "off" } | { kind: "unavailable"; reason: string };

function confinementFor(options: RunShellOptions, root: string): Confinement {
  const mode = options.sandbox ?? "workspace-write";
  if (mode === "off") return { kind: "off" };
  const probe = probeBubblewrap(options.bwrapPath ?? defaultBubblewrapPath());
  if (!probe.available) return { kind: "unavailable", reason: probe.reason };
  return { kind: "sandbox", wrapper: bubblewrapArgs(probe.path, root, { mode, network: options.network ?? false }) };
}

function unsandboxedWarning(reason: string): string {
  return (
    `${reason}, so this command would run without a sandbox, with your full privileges (any file, the network). ` +
    `Install bubblewrap (apt-get install bubblewrap), or set sandbox: "off" (--sandbox off) to run commands unsandboxed knowingly`
  );
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

export function formatShellRun(command: string, run: ShellRun, timeoutMs: number): string {
  const parts = [`$ ${command}`, status(run, timeoutMs)];
  if (run.stdout !== "") parts.push(`stdout:\n${run.stdout.replace(/\n$/, "")}`);
  if (run.stderr !== "") parts.push(`stderr:\n${run.stderr.replace(/\n$/, "")}`);
  if (run.stdout === "" && run.stderr === "") parts.push("(no output)");
  return parts.join("\n");
}

export function createRunShellTool(options: RunShellOptions): Tool<RunShellArgs> {
  const maxTimeout = options.maxTimeoutMs ?? SHELL_MAX_TIMEOUT_MS;

  async function run(args: RunShellArgs, ctx: ToolContext, confinement: Confinement): Promise<ToolResult> {
    const timeoutMs = args.timeout_ms ?? options.timeoutMs;
    if (ctx.signal.aborted) return { forModel: "Aborted before the command started.", summary: "run_shell: aborted", isError: true };
    const marker = randomUUID();
    const result = await runShellCommand(args.command, {
      cwd: ctx.root,
      timeoutMs,
      maxCaptureBytes: options.maxCaptureBytes ?? SHELL_CAPTURE_BYTES,
      signal: ctx.signal,
      env: { ...buildShellEnv(process.env, options.shellEnv ?? []), [RUN_MARKER_VAR]: marker },
      ...(confinement.kind === "sandbox" ? { wrapper: confinement.wrapper } : {}),
    });
    // In the sandbox the PID namespace is ending everything; outside it, say what is still running.
    const left = confinement.kind === "sandbox" ? await awaitNamespaceEnd(marker, NAMESPACE_END_MS) : findEscapedProcesses(marker);
    const escaped = describeEscaped(left);
    const seconds = (result.durationMs / 1000).toFixed(1);
    const outcome = result.aborted ? "aborted" : result.timedOut ? "timed out" : result.exitCode === null ? `signal ${result.signal}` : `exit ${result.exitCode}`;
    const text = formatShellRun(args.command, result, timeoutMs);
    return {
      forModel: escaped === undefined ? text : `${text}\n${escaped}`,
      summary: `ran \`${oneLine(args.command)}\` → ${outcome} (${seconds}s)${confinement.kind === "sandbox" ? "" : " unsandboxed"}`,
      isError: result.aborted || result.timedOut || result.exitCode !== 0,
    };
  }

  return {
    name: "run_shell",
    description: toolText("run_shell"),
    kind: "shell",
    parameters: {
      type: "object",
      properties: {
        command: { type: "string", minLength: 1 },
        timeout_ms: { type: ["integer", "null"], minimum: 100, maximum: maxTimeout, description: `default ${options.timeoutMs}` },
      },
      required: ["command"],
      additionalProperties: false,
    },
    describe: (args) => `run \`${oneLine(args.command)}\``,
    async prepare(args, ctx): Promise<PreparedCall> {
      const confinement = confinementFor(options, ctx.root);
      const prepared: PreparedCall = { ready: true, kind: "shell", description: `run \`${oneLine(args.command)}\``, apply: () => run(args, ctx, confinement) };
      if (confinement.kind === "unavailable") {
        prepared.escalate = unsandboxedWarning(confinement.reason);
        prepared.askEvenInFullAuto = true;
      }
      return prepared;
    },
    execute: (args, ctx) => run(args, ctx, confinementFor(options, ctx.root)),
  };
}
