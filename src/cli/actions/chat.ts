/**
 * `valarmind chat`: the REPL on a terminal, or one headless turn with -p. Exit codes (headless):
 * 0 the turn completed; 1 the model or a tool failed (the message is on stderr and the user's
 * message is in the transcript); 2 usage or configuration error; 130 interrupted (Ctrl+C).
 */
import type { ChatOptions } from "../commands/chat.ts";
import { findWorkspaceRoot } from "../../config/paths.ts";
import { loadSettings } from "../../config/load-settings.ts";
import type { PartialSettings, Settings } from "../../config/settings-schema.ts";
import { UsageError } from "../../errors.ts";
import { createModelClient, endpointWarning, resolveEndpoint } from "../../model/client-factory.ts";
import type { ResumeTarget } from "../../agent/session-memory.ts";
import { AgentSession } from "../../agent/session.ts";
import { trace } from "../../trace.ts";
import { createHeadlessPrinter } from "../../ui/print-headless.ts";
import { createJsonPrinter } from "../../ui/print-json.ts";

export const EXIT_INTERRUPTED = 130;

function flagSettings(opts: ChatOptions): PartialSettings {
  const flags: PartialSettings = {};
  if (opts.model !== undefined) flags.model = opts.model;
  if (opts.yes) flags.approvals = "full-auto";
  if (opts.approvals !== undefined) flags.approvals = opts.approvals as Settings["approvals"];
  if (opts.reasoningEffort !== undefined) flags.reasoningEffort = opts.reasoningEffort as Settings["reasoningEffort"];
  if (opts.budget !== undefined) {
    const n = Number(opts.budget);
    if (!Number.isInteger(n) || n < 1000) throw new UsageError(`--budget must be an integer of at least 1000 tokens, got '${opts.budget}'`);
    flags.maxContextTokens = n;
  }
  return flags;
}

function resumeTarget(opts: ChatOptions): ResumeTarget {
  if (opts.continue) return { kind: "latest" };
  if (opts.resume !== undefined) return { kind: "id", id: opts.resume };
  return { kind: "new" };
}

async function readMessage(raw: string): Promise<string> {
  const text = raw === "-" ? await new Response(Bun.stdin.stream()).text() : raw;
  if (text.trim() === "") throw new UsageError(raw === "-" ? "-p -: standard input was empty" : "-p needs a non-empty MESSAGE");
  return text;
}

export async function runChat(opts: ChatOptions): Promise<number> {
  trace("chat: command loaded");
  const root = findWorkspaceRoot();
  const settings = loadSettings(root, flagSettings(opts));
  const model = createModelClient({ settings });
  const resume = resumeTarget(opts);
  if (opts.print !== undefined) return runHeadless(opts, root, settings, model, resume, await readMessage(opts.print));

  if (!process.stdin.isTTY || !process.stdout.isTTY) {
    throw new UsageError("valarmind chat needs a terminal for the interactive REPL", {
      hint: "For scripts and CI use headless mode: valarmind chat -p MESSAGE (add --json for events).",
    });
  }
  const warning = endpointWarning(resolveEndpoint(settings));
  const [{ SessionChatController }, { runRepl }] = await Promise.all([import("../chat/chat-controller.ts"), import("../../ui/run-repl.ts")]);
  const controller = await SessionChatController.open({
    root,
    settings,
    model,
    interactive: true,
    resume,
    warnings: warning ? [warning] : [],
  });
  await runRepl(controller);
  return 0;
}

async function runHeadless(
  opts: ChatOptions,
  root: string,
  settings: Settings,
  model: ReturnType<typeof createModelClient>,
  resume: ResumeTarget,
  message: string,
): Promise<number> {
  const session = await AgentSession.open({ root, settings, model, interactive: false, resume });
  trace("chat: session open");
  const write = (stream: NodeJS.WriteStream) => (text: string) => void stream.write(text);
  const print = opts.json
    ? createJsonPrinter(write(process.stdout))
    : createHeadlessPrinter({ out: write(process.stdout), err: write(process.stderr), streamText: process.stdout.isTTY === true, verbose: opts.verbose === true });
  if (session.resumed && session.transcriptPath) {
    print({ type: "session_start", sessionId: session.sessionId, transcriptPath: session.transcriptPath, resumed: true });
  }
  for (const notice of session.openNotices) print({ type: "notice", message: notice });

  const abort = new AbortController();
  const onSigint = () => abort.abort();
  process.once("SIGINT", onSigint);
  let stopReason = "error";
  try {
    for await (const event of session.submit(message, abort.signal)) {
      print(event);
      if (event.type === "turn_end") stopReason = event.stopReason;
    }
  } finally {
    process.off("SIGINT", onSigint);
    await session.close();
  }
  if (stopReason === "aborted") return EXIT_INTERRUPTED;
  return stopReason === "completed" || stopReason === "incomplete" ? 0 : 1;
}
