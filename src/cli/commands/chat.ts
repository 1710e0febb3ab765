import type { Command } from "commander";
import { UsageError } from "../../errors.ts";
import { once } from "./once-option.ts";

export interface ChatOptions {
  print?: string;
  continue?: boolean;
  resume?: string;
  json?: boolean;
  outputFormat?: string;
  model?: string;
  approvals?: string;
  yes?: boolean;
  budget?: string;
  reasoningEffort?: string;
  verbose?: boolean;
  trust?: boolean;
  sandbox?: string;
  network?: boolean;
  /** False with --no-context-files. */
  contextFiles?: boolean;
  image?: string[];
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

const APPROVAL_MODES = ["suggest", "auto-edit", "full-auto"];
const SANDBOX_MODES = ["workspace-write", "read-only", "off"];
const REASONING_EFFORTS = ["none", "minimal", "low", "medium", "high"];
export const OUTPUT_FORMATS = ["text", "json", "stream-json"] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** What `chat -p` prints on stdout: --output-format, or stream-json for --json, else the answer as text. */
export function headlessFormat(opts: Pick<ChatOptions, "json" | "outputFormat">): OutputFormat {
  if (opts.json) return "stream-json";
  return OUTPUT_FORMATS.find((f) => f === opts.outputFormat) ?? "text";
}

function checkOutputFormat(opts: ChatOptions): void {
  const format = opts.outputFormat;
  if (format !== undefined && !(OUTPUT_FORMATS as readonly string[]).includes(format)) {
    throw new UsageError(`--output-format must be one of ${OUTPUT_FORMATS.join(", ")}, got '${format}'`, { hint: "Pass one of those, e.g. --output-format json for one result object." });
  }
  if (opts.json && format !== undefined && format !== "stream-json") {
    throw new UsageError(`--json is --output-format stream-json, so it cannot go with --output-format ${format}`, { hint: "Pass one of them: --output-format json for one result object, --json for one event per line." });
  }
  if (format !== undefined && opts.print === undefined) {
    throw new UsageError("--output-format needs -p MESSAGE (it formats the output of one headless turn)", { hint: "Pass -p MESSAGE with --output-format, or leave it out for the REPL." });
  }
}

/** `valarmind chat`: the REPL, or one headless turn with -p. Options only; the work is imported lazily. */
export function registerChat(program: Command): void {
  program
    .command("chat")
    .description("talk to the agent: the interactive REPL, or one headless turn with -p")
    .option("-p, --print <message>", "headless: run one turn with MESSAGE and print the final answer ('-' reads stdin)", once)
    .option("-c, --continue", "continue the latest session of this workspace")
    .option("-r, --resume <id>", "resume session ID (an id, unique prefix, or transcript file)")
    .option("--json", "with -p: print one JSON event per line instead of the answer (same as --output-format stream-json)")
    .option("--output-format <format>", "with -p: text (the answer, the default) | json (one result object at the end) | stream-json (one JSON event per line)")
    .option("-m, --model <model>", "model to use (overrides config and VALARMIND_MODEL)")
    .option("--approvals <mode>", "approval mode: suggest | auto-edit | full-auto")
    .option("-y, --yes", "headless: allow file edits and shell commands without asking (same as --approvals full-auto)")
    .option("--budget <tokens>", "MAX_CONTEXT_TOKENS for this run", once)
    .option("--reasoning-effort <effort>", "none | minimal | low | medium | high")
    .option("--verbose", "headless: show tool calls on stderr")
    .option("--trust", "trust this folder for this run: apply its project settings (.valarmind/config.json)")
    .option("--sandbox <mode>", "shell sandbox: workspace-write | read-only | off (off runs commands unsandboxed)")
    .option("--network", "let sandboxed shell commands reach the network")
    .option("--no-context-files", "read no instruction file (AGENTS.md, CLAUDE.md, VALARMIND.md, VALARMIND.local.md): only valarmind's core rules")
    .option("--image <path>", "with -p: send an image (png, jpeg, gif, webp; at most 5 MB) with the message; repeatable", collect, [])
    .action(async (opts: ChatOptions) => {
      if (opts.approvals !== undefined && !APPROVAL_MODES.includes(opts.approvals)) {
        throw new UsageError(`--approvals must be one of ${APPROVAL_MODES.join(", ")}, got '${opts.approvals}'`, { hint: "Pass one of those, e.g. --approvals suggest." });
      }
      if (opts.sandbox !== undefined && !SANDBOX_MODES.includes(opts.sandbox)) {
        throw new UsageError(`--sandbox must be one of ${SANDBOX_MODES.join(", ")}, got '${opts.sandbox}'`, { hint: "Pass one of those, e.g. --sandbox workspace-write." });
      }
      if (opts.reasoningEffort !== undefined && !REASONING_EFFORTS.includes(opts.reasoningEffort)) {
        throw new UsageError(`--reasoning-effort must be one of ${REASONING_EFFORTS.join(", ")}, got '${opts.reasoningEffort}'`, { hint: "Pass one of those, e.g. --reasoning-effort medium." });
      }
      if (opts.model !== undefined && opts.model.trim() === "") {
        throw new UsageError("--model needs a model name, got ''", { hint: "Pass a model name (e.g. --model gpt-5-mini), or leave --model out to use the configured one." });
      }
      if (opts.continue && opts.resume !== undefined) throw new UsageError("use either --continue or --resume ID, not both", { hint: "Pass --continue for the latest session, or --resume ID for another one." });
      // A script's unset "$ID" would otherwise match the only session (every id starts with "").
      if (opts.resume !== undefined && opts.resume.trim() === "") throw new UsageError("--resume needs a session id, and an empty one was given", { hint: "Run 'valarmind sessions list' for the ids, or pass --continue for the latest session." });
      checkOutputFormat(opts);
      if ((opts.image?.length ?? 0) > 0 && opts.print === undefined) {
        throw new UsageError("--image needs -p MESSAGE (it sends images with one headless turn)", { hint: "Pass -p MESSAGE with --image, or in the REPL attach an image in the message with @path/to/shot.png." });
      }
      if (opts.json && opts.print === undefined) throw new UsageError("--json needs -p MESSAGE (it prints the events of one headless turn)", { hint: "Pass -p MESSAGE with --json, or leave --json out for the REPL." });
      const { runChat } = await import("../actions/chat.ts");
      process.exitCode = await runChat(opts);
    });
}
