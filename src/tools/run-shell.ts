/** run_shell: one `bash -lc` command in the workspace root, with a timeout and an output cap. */
import { toolText } from "./descriptions.ts";
import { runShellCommand, type ShellRun } from "./shell-process.ts";
import type { Tool } from "./types.ts";

export type RunShellArgs = { command: string; timeout_ms?: number };

export interface RunShellOptions {
  /** Default timeout (settings.shellTimeoutMs); a call may ask for less or up to `maxTimeoutMs`. */
  timeoutMs: number;
  maxTimeoutMs?: number;
  /** Bytes kept per stream (head + tail); the rest is dropped before central truncation. */
  maxCaptureBytes?: number;
}

export const SHELL_MAX_TIMEOUT_MS = 10 * 60 * 1000;
export const SHELL_CAPTURE_BYTES = 1024 * 1024;

/** Credentials valarmind itself uses never reach a command the model runs (or its output). */
const HIDDEN_ENV = /^(OPENAI_API_KEY|OPENAI_ADMIN_KEY|AZURE_OPENAI_API_KEY)$/;

function shellEnv(): Record<string, string | undefined> {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !HIDDEN_ENV.test(name)));
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
    async execute(args, ctx) {
      const timeoutMs = args.timeout_ms ?? options.timeoutMs;
      if (ctx.signal.aborted) return { forModel: "Aborted before the command started.", summary: "run_shell: aborted", isError: true };
      const run = await runShellCommand(args.command, {
        cwd: ctx.root,
        timeoutMs,
        maxCaptureBytes: options.maxCaptureBytes ?? SHELL_CAPTURE_BYTES,
        signal: ctx.signal,
        env: shellEnv(),
      });
      const seconds = (run.durationMs / 1000).toFixed(1);
      const outcome = run.aborted ? "aborted" : run.timedOut ? "timed out" : run.exitCode === null ? `signal ${run.signal}` : `exit ${run.exitCode}`;
      return {
        forModel: formatShellRun(args.command, run, timeoutMs),
        summary: `ran \`${oneLine(args.command)}\` → ${outcome} (${seconds}s)`,
        isError: run.aborted || run.timedOut || run.exitCode !== 0,
      };
    },
  };
}
