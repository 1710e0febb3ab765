/**
 * `valarmind chat`: the REPL on a terminal, or one headless turn with -p. Exit codes (headless):
 * 0 the turn completed; 1 the model or a tool failed (the message is on stderr and the user's
 * message is in the transcript); 2 usage or configuration error; 130 interrupted (Ctrl+C), 143
 * terminated (SIGTERM), 129 hung up (SIGHUP): the turn is aborted and recorded like Ctrl+C.
 */
import type { ChatOptions } from "../commands/chat.ts";
import { findWorkspaceRoot } from "../../config/paths.ts";
import { storeTrust } from "../../config/folder-trust.ts";
import { resolveSettings, type LoadedSettings } from "../../config/load-settings.ts";
import type { PartialSettings, Settings } from "../../config/settings-schema.ts";
import { UsageError } from "../../errors.ts";
import { probeBubblewrap, sandboxUnavailableNotice } from "../../sandbox/bubblewrap.ts";
import { createModelClient, endpointWarning, resolveEndpoint } from "../../model/client-factory.ts";
import type { ResumeTarget } from "../../memory/session-memory.ts";
import { AgentSession } from "../../agent/session.ts";
import { sessionWaitMs } from "../../session/session-lock.ts";
import { workspacePaths } from "../../config/paths.ts";
import { StateStore } from "../../state/store.ts";
import { trace } from "../../trace.ts";
import { createHeadlessPrinter } from "../../ui/print-headless.ts";
import { createJsonPrinter } from "../../ui/print-json.ts";
import { decideTrust, ignoredSettingsMessage, trustQuestion } from "./workspace-trust.ts";

export const EXIT_INTERRUPTED = 130;
/** 128 + the signal's number, as shells report a command a signal ended. */
const SIGNAL_EXIT_CODES = { SIGINT: EXIT_INTERRUPTED, SIGTERM: 143, SIGHUP: 129 } as const;
type EndingSignal = keyof typeof SIGNAL_EXIT_CODES;

/** Said once per run when shell commands cannot be sandboxed (unless the user chose sandbox: "off"). */
function sandboxNotice(settings: Settings): string | undefined {
  if (settings.sandbox === "off") return undefined;
  const probe = probeBubblewrap();
  return probe.available ? undefined : sandboxUnavailableNotice(probe.reason);
}

function flagSettings(opts: ChatOptions): PartialSettings {
  const flags: PartialSettings = {};
  if (opts.model !== undefined) flags.model = opts.model;
  if (opts.yes) flags.approvals = "full-auto";
  if (opts.approvals !== undefined) flags.approvals = opts.approvals as Settings["approvals"];
  if (opts.sandbox !== undefined) flags.sandbox = opts.sandbox as Settings["sandbox"];
  if (opts.network) flags.network = true;
  if (opts.reasoningEffort !== undefined) flags.reasoningEffort = opts.reasoningEffort as Settings["reasoningEffort"];
  if (opts.budget !== undefined) {
    const n = Number(opts.budget);
    if (!Number.isInteger(n) || n < 1000) throw new UsageError(`--budget must be an integer of at least 1000 tokens, got '${opts.budget}'`, { hint: "Pass a whole number of tokens, e.g. --budget 8000." });
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
  if (text.trim() === "") throw new UsageError(raw === "-" ? "-p -: standard input was empty" : "-p needs a non-empty MESSAGE", {
      hint: raw === "-" ? "Pipe the message into valarmind (echo 'fix the test' | valarmind chat -p -)." : "Pass the message after -p, e.g. -p \"fix the failing test\".",
    });
  return text;
}

/**
 * Settings for this run. An untrusted folder's project settings are ignored (only a narrower
 * approval mode applies); on a terminal, the first run in such a folder asks once and stores
 * the answer. Returns undefined when the user quit at that question.
 */
async function settingsForRun(root: string, opts: ChatOptions, interactive: boolean): Promise<LoadedSettings | undefined> {
  const flags = flagSettings(opts);
  const trust = decideTrust(root, opts.trust);
  const loaded = resolveSettings(root, flags, { trusted: trust.trusted });
  if (!interactive || trust.source !== "none" || !loaded.project || loaded.project.ignored.length === 0) return loaded;
  const { askFolderTrust } = await import("../../ui/run-folder-trust.ts");
  const answer = await askFolderTrust(trustQuestion(root, loaded.project));
  if (answer === "quit") return undefined;
  await storeTrust(root, answer);
  return resolveSettings(root, flags, { trusted: answer === "trusted" });
}

function ignoredNotice(root: string, loaded: LoadedSettings): string | undefined {
  const project = loaded.project;
  return project && project.ignored.length > 0 ? ignoredSettingsMessage(root, project) : undefined;
}

/**
 * Before the model works from the state: a state from a newer valarmind stops the run (exit 2); a
 * bad one is moved aside, and what was done is returned so it is always announced.
 */
async function recoverState(root: string): Promise<string[]> {
  return (await new StateStore(workspacePaths(root)).recover()).notices;
}

export async function runChat(opts: ChatOptions): Promise<number> {
  trace("chat: command loaded");
  const root = findWorkspaceRoot();
  if (opts.print !== undefined) {
    const loaded = await settingsForRun(root, opts, false);
    if (!loaded) return 0;
    sessionWaitMs(process.env); // a bad VALARMIND_SESSION_WAIT_MS is a usage error before anything is written
    const model = createModelClient({ settings: loaded.settings });
    const message = await readMessage(opts.print);
    const stateNotices = await recoverState(root);
    return runHeadless(opts, root, loaded, model, resumeTarget(opts), message, stateNotices);
  }

  if (!process.stdin.isTTY || !process.stdout.isTTY) {
    throw new UsageError("valarmind chat needs a terminal for the interactive REPL", {
      hint: "For scripts and CI use headless mode: valarmind chat -p MESSAGE (add --json for events).",
    });
  }
  const loaded = await settingsForRun(root, opts, true);
  if (!loaded) return 0;
  const settings = loaded.settings;
  const model = createModelClient({ settings });
  const stateNotices = await recoverState(root);
  const warnings = [endpointWarning(resolveEndpoint(settings)), ignoredNotice(root, loaded), sandboxNotice(settings), ...stateNotices].filter((w): w is string => w !== undefined);
  const [{ SessionChatController }, { runRepl }] = await Promise.all([import("../chat/chat-controller.ts"), import("../../ui/run-repl.ts")]);
  const controller = await SessionChatController.open({
    root,
    settings,
    model,
    interactive: true,
    resume: resumeTarget(opts),
    warnings,
  });
  await runRepl(controller);
  return 0;
}

async function runHeadless(
  opts: ChatOptions,
  root: string,
  loaded: LoadedSettings,
  model: ReturnType<typeof createModelClient>,
  resume: ResumeTarget,
  message: string,
  stateNotices: readonly string[],
): Promise<number> {
  const settings = loaded.settings;
  const write = (stream: NodeJS.WriteStream) => (text: string) => void stream.write(text);
  const print = opts.json
    ? createJsonPrinter(write(process.stdout))
    : createHeadlessPrinter({ out: write(process.stdout), err: write(process.stderr), streamText: process.stdout.isTTY === true, verbose: opts.verbose === true });

  // SIGTERM and SIGHUP (a closed terminal, a supervisor stopping us) end the turn like Ctrl+C.
  // Installed before the session opens: a signal while waiting for a busy session forks it, so
  // the message is still saved (as an aborted turn).
  const abort = new AbortController();
  let endedBy: EndingSignal | undefined;
  const handlers = (Object.keys(SIGNAL_EXIT_CODES) as EndingSignal[]).map((signal) => {
    const handler = (): void => {
      endedBy ??= signal;
      abort.abort();
      // Removed only after this signal's other listeners ran: proper-lockfile's signal-exit kills
      // the process at once when it finds itself the only listener. A second signal then does.
      setImmediate(() => process.off(signal, handler));
    };
    process.on(signal, handler);
    return [signal, handler] as const;
  });
  const removeHandlers = (): void => {
    for (const [signal, handler] of handlers) process.off(signal, handler);
  };
  let session: AgentSession;
  try {
    session = await AgentSession.open({
      root,
      settings,
      model,
      interactive: false,
      resume,
      busySession: { waitMs: sessionWaitMs(process.env), signal: abort.signal, onWait: (message) => print({ type: "notice", message, code: "session_busy" }) },
    });
  } catch (error) {
    removeHandlers();
    throw error;
  }
  trace("chat: session open");
  if (session.resumed && session.transcriptPath) {
    print({ type: "session_start", sessionId: session.sessionId, transcriptPath: session.transcriptPath, resumed: true });
  }
  const ignored = ignoredNotice(root, loaded);
  if (ignored) print({ type: "notice", message: ignored, code: "untrusted_project_settings" });
  const unsandboxed = sandboxNotice(settings);
  if (unsandboxed) print({ type: "notice", message: unsandboxed, code: "sandbox_unavailable" });
  for (const notice of stateNotices) print({ type: "notice", message: notice, code: "state_moved_aside" });
  for (const notice of session.openNoticeEvents) print({ type: "notice", ...notice });

  let stopReason = "error";
  let overBudget = false;
  try {
    // The answer is printed at turn_end, before the settle step's fold (a model call of its own).
    for await (const event of session.submit(message, abort.signal)) {
      print(event);
      if (event.type === "turn_end") stopReason = event.stopReason;
      if (event.type === "error" && event.kind === "budget") overBudget = true;
    }
    for await (const event of session.settle(abort.signal)) print(event);
  } finally {
    removeHandlers();
    await session.close();
  }
  if (endedBy !== undefined) return SIGNAL_EXIT_CODES[endedBy];
  if (stopReason === "aborted") return EXIT_INTERRUPTED;
  // A budget (--budget, MAX_CONTEXT_TOKENS) too small for what must be sent is a configuration problem.
  if (overBudget && stopReason === "error") return 2;
  return stopReason === "completed" || stopReason === "incomplete" ? 0 : 1;
}
