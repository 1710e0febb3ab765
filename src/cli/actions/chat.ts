/**
 * `valarmind chat`: the REPL on a terminal, or one headless turn with -p. Exit codes (headless):
 * 0 the turn completed; 1 the model or a tool failed (the message is on stderr and the user's
 * message is in the transcript); 2 usage or configuration error; 130 interrupted (Ctrl+C), 143
 * terminated (SIGTERM), 129 hung up (SIGHUP): the turn is aborted and recorded like Ctrl+C.
 */
import { userConfigFileShown } from "../../config/user-config-dir.ts";
import { parseBudgetFlag } from "../budget-flag.ts";
import { onStdoutClosed } from "../stdout-closed.ts";
import { relative } from "node:path";
import { headlessFormat, type ChatOptions, type OutputFormat } from "../commands/chat.ts";
import { findWorkspaceRoot } from "../../config/paths.ts";
import { storeTrust } from "../../config/folder-trust.ts";
import { resolveSettings, type LoadedSettings } from "../../config/load-settings.ts";
import type { PartialSettings, Settings } from "../../config/settings-schema.ts";
import { UsageError, ValarmindError, describeError } from "../../errors.ts";
import { probeBubblewrap, sandboxUnavailableNotice } from "../../sandbox/bubblewrap.ts";
import { createModelClient, endpointWarning, resolveEndpoint } from "../../model/client-factory.ts";
import type { ResumeTarget } from "../../memory/session-memory.ts";
import { AgentSession } from "../../agent/session.ts";
import { NO_MCP_SERVERS, startMcpServers, type McpToolSet } from "../../mcp/start-servers.ts";
import { sessionWaitMs } from "../../session/session-lock.ts";
import { workspacePaths } from "../../config/paths.ts";
import { createStateStore, storeChoiceFromSettings } from "../../store/create-state-store.ts";
import { trace } from "../../trace.ts";
import { createHeadlessPrinter } from "../../ui/print-headless.ts";
import { createJsonPrinter, jsonForTerminal } from "../../ui/print-json.ts";
import { pricesFor, type Prices } from "../../agent/session-cost.ts";
import { createResultCollector, type ResultCollector } from "../../ui/print-result.ts";
import type { ResultError } from "../../agent/headless-result.ts";
import type { AgentEvent } from "../../agent/events.ts";
import { stdinWaitMs } from "../piped-input.ts";
import { readImageFlag } from "../image-flag.ts";
import type { ImageFileAttachment } from "../../prompt/attachment-files.ts";
import { decideTrust, ignoredSettingsMessage, shownSetting, trustQuestion } from "./workspace-trust.ts";
import { customCommandsForRun } from "./custom-commands-for-run.ts";
import { headlessMessage } from "./headless-message.ts";

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
  if (opts.budget !== undefined) flags.maxContextTokens = parseBudgetFlag(opts.budget);
  return flags;
}

function resumeTarget(opts: ChatOptions): ResumeTarget {
  if (opts.continue) return { kind: "latest" };
  if (opts.resume !== undefined) return { kind: "id", id: opts.resume };
  return { kind: "new" };
}

interface HeadlessMessage {
  text: string;
  /** `--image` files, read and checked. */
  images?: ImageFileAttachment[];
  /** Said once the session is open: a pipe that sent nothing was left unread. */
  notices: string[];
  /** The custom command as typed, when `text` is its expansion. */
  typed?: string;
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
  if (!project) return undefined;
  const lines: string[] = [];
  if (project.ignored.length > 0 && !project.trusted) lines.push(ignoredSettingsMessage(root, project));
  if (project.ignored.length > 0 && project.trusted) {
    // Trusted, yet some changes stay out (turning the sandbox off): trust is not what is missing.
    const list = project.ignored.map((c) => `${c.key}: ${shownSetting(c.key, c.to)}`).join(", ");
    lines.push(`ignoring ${list} in ${relative(root, project.file)}: only your own settings (a flag such as --sandbox off, VALARMIND_SANDBOX, or ${userConfigFileShown()}) may set ${project.ignored.length > 1 ? "them" : "it"}, trusted folder or not.`);
  }
  if (project.userOnly.length > 0) {
    lines.push(`ignoring ${project.userOnly.join(" and ")} in ${relative(root, project.file)}: only your own settings (${userConfigFileShown()}, or VALARMIND_STORE for the store) may set ${project.userOnly.length > 1 ? "them" : "it"}, trusted folder or not.`);
  }
  return lines.length > 0 ? lines.join("\n") : undefined;
}

/**
 * Before the model works from the state: a state from a newer valarmind stops the run (exit 2); a
 * bad one is moved aside, and what was done is returned so it is always announced.
 */
async function recoverState(root: string, settings: Settings): Promise<string[]> {
  return (await createStateStore(workspacePaths(root), storeChoiceFromSettings(settings)).recover()).notices;
}

export async function runChat(opts: ChatOptions): Promise<number> {
  trace("chat: command loaded");
  const root = findWorkspaceRoot();
  if (opts.print !== undefined) {
    const print = opts.print;
    return reportingResult(headlessFormat(opts), async (run) => {
      const loaded = await settingsForRun(root, opts, false);
      if (!loaded) return 0;
      const prices = pricesFor(loaded.settings);
      if (prices) run.prices = prices;
      sessionWaitMs(process.env); // a bad VALARMIND_SESSION_WAIT_MS is a usage error before anything is written
      const waitMs = stdinWaitMs(process.env);
      const images = await Promise.all((opts.image ?? []).map(readImageFlag));
      const model = createModelClient({ settings: loaded.settings });
      const read = await untilSignal(headlessMessage(root, opts.trust, print, waitMs), run);
      const message = { ...read, images };
      const stateNotices = await recoverState(root, loaded.settings);
      return runHeadless(opts, root, loaded, model, resumeTarget(opts), message, stateNotices, run);
    });
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
  const stateNotices = await recoverState(root, settings);
  const custom = await customCommandsForRun(root, opts.trust);
  const warnings = [endpointWarning(resolveEndpoint(settings)), ignoredNotice(root, loaded), sandboxNotice(settings), ...stateNotices, ...custom.notices].filter((w): w is string => w !== undefined);
  const [{ SessionChatController }, { runRepl }] = await Promise.all([import("../chat/chat-controller.ts"), import("../../ui/run-repl.ts")]);
  const mcp = await startMcpServers(settings, root, undefined, decideTrust(root, opts.trust).trusted);
  try {
    const controller = await SessionChatController.open({
      mcp,
      root,
      settings,
      model,
      interactive: true,
      resume: resumeTarget(opts),
      warnings,
      customCommands: custom.commands,
      statusSource: { root, loaded, trust: decideTrust(root, opts.trust) },
      ...(opts.contextFiles === false && { contextFiles: false }),
    });
    await runRepl(controller);
  } finally {
    await mcp.close();
  }
  return 0;
}

/**
 * `work` (reading standard input, which may never end), ended early by SIGINT, SIGTERM or SIGHUP
 * with that signal's exit code: the result object (--output-format json) still says "aborted".
 */
async function untilSignal<T>(work: Promise<T>, run: HeadlessRun): Promise<T> {
  const installed: Array<[EndingSignal, () => void]> = [];
  const signalled = new Promise<never>((_, reject) => {
    for (const signal of Object.keys(SIGNAL_EXIT_CODES) as EndingSignal[]) {
      const handler = (): void => {
        const message = `interrupted by ${signal} while reading the message; nothing was sent`;
        run.failure = { kind: "aborted", message };
        reject(new ValarmindError(message, { exitCode: SIGNAL_EXIT_CODES[signal] }));
      };
      process.on(signal, handler);
      installed.push([signal, handler]);
    }
  });
  try {
    return await Promise.race([work, signalled]);
  } finally {
    for (const [signal, handler] of installed) process.off(signal, handler);
  }
}

/** A headless run as --output-format json reports it: its events, and what they cannot say. */
interface HeadlessRun {
  format: OutputFormat;
  results: ResultCollector | undefined;
  /** The session the result names, once it has a transcript (an id that never reached the disk cannot be resumed). */
  sessionId: () => string | undefined;
  failure: ResultError | undefined;
  /** The model's prices from settings, for the result's cost. */
  prices?: Prices;
}

/**
 * Runs `body`; with --output-format json, prints the one result object on stdout when it ends,
 * also when it throws (then rethrows: stderr and the exit code stay as without json).
 */
async function reportingResult(format: OutputFormat, body: (run: HeadlessRun) => Promise<number>): Promise<number> {
  const started = performance.now();
  const run: HeadlessRun = { format, results: format === "json" ? createResultCollector() : undefined, sessionId: () => undefined, failure: undefined };
  const printResult = (exitCode: number): void => {
    if (!run.results) return;
    // Decided before the write: a reader gone by now (EPIPE) ends the run with this code.
    process.exitCode = exitCode;
    const end = { exitCode, sessionId: run.sessionId(), durationMs: performance.now() - started, ...(run.prices && { prices: run.prices }) };
    process.stdout.write(`${jsonForTerminal(run.results.finish(run.failure ? { ...end, failure: run.failure } : end))}\n`);
  };
  let code: number;
  try {
    code = await body(run);
  } catch (error) {
    const exitCode = error instanceof ValarmindError ? error.exitCode : 1;
    const hint = error instanceof ValarmindError ? error.hint : undefined;
    // A signal already said why (kind aborted); anything else is a usage or internal failure.
    run.failure ??= { kind: exitCode === 2 ? "usage" : "internal", message: describeError(error), ...(hint !== undefined ? { hint } : {}) };
    printResult(exitCode);
    throw error;
  }
  printResult(code);
  return code;
}

/** The printer for the run's format: the answer (text), nothing but stderr notes (json), or every event (stream-json). */
function headlessPrinter(opts: ChatOptions, run: HeadlessRun): (event: AgentEvent) => void {
  const write = (stream: NodeJS.WriteStream) => (text: string) => void stream.write(text);
  if (run.format === "stream-json") return createJsonPrinter(write(process.stdout));
  const human = createHeadlessPrinter({
    out: run.format === "json" ? () => {} : write(process.stdout),
    err: write(process.stderr),
    streamText: run.format === "text" && process.stdout.isTTY === true,
    verbose: opts.verbose === true,
  });
  const results = run.results;
  if (!results) return human;
  return (event) => {
    human(event);
    results.onEvent(event);
  };
}

async function runHeadless(
  opts: ChatOptions,
  root: string,
  loaded: LoadedSettings,
  model: ReturnType<typeof createModelClient>,
  resume: ResumeTarget,
  message: HeadlessMessage,
  stateNotices: readonly string[],
  run: HeadlessRun,
): Promise<number> {
  const settings = loaded.settings;
  const printer = headlessPrinter(opts, run);
  // A reader that went away (`| head -n 1`): nothing more is printed, but the turn runs to its end
  // and is recorded (the answer is paid for; `sessions show` has it); the exit code is the
  // turn's. A stdout that could not be written (a full disk) makes it 1.
  let readerGone = false;
  let writeFailed = false;
  const print: typeof printer = (event) => {
    if (!readerGone) printer(event);
  };
  onStdoutClosed((failed) => {
    readerGone = true;
    writeFailed ||= failed;
  });

  // SIGTERM and SIGHUP (a closed terminal, a supervisor stopping us) end the turn like Ctrl+C.
  // Installed before the session opens: a signal while waiting for a busy session forks it, so
  // the message is still saved (as an aborted turn).
  const abort = new AbortController();
  let endedBy: EndingSignal | undefined;
  let signals = 0;
  // Installed until the session is closed: proper-lockfile's signal-exit kills the process at once
  // when it finds itself the only listener, so a second signal during the shutdown would skip the
  // turn's record. A third one is taken as "stop now".
  const handlers = (Object.keys(SIGNAL_EXIT_CODES) as EndingSignal[]).map((signal) => {
    const handler = (): void => {
      endedBy ??= signal;
      abort.abort();
      if (++signals >= 3) {
        removeHandlers();
        process.kill(process.pid, signal);
      }
    };
    process.on(signal, handler);
    return [signal, handler] as const;
  });
  function removeHandlers(): void {
    for (const [signal, handler] of handlers) process.off(signal, handler);
  }

  let session: AgentSession;
  let mcp: McpToolSet = NO_MCP_SERVERS;
  try {
    mcp = await startMcpServers(settings, root, abort.signal, decideTrust(root, opts.trust).trusted);
    session = await AgentSession.open({
      mcp,
      root,
      settings,
      model,
      interactive: false,
      resume,
      ...(opts.contextFiles === false && { contextFiles: false }),
      busySession: { waitMs: sessionWaitMs(process.env), signal: abort.signal, onWait: (message) => print({ type: "notice", message, code: "session_busy" }) },
    });
  } catch (error) {
    removeHandlers();
    onStdoutClosed(undefined);
    await mcp.close();
    throw error;
  }
  trace("chat: session open");
  const opened = session;
  run.sessionId = () => (opened.transcriptPath !== undefined ? opened.sessionId : undefined);
  if (session.resumed && session.transcriptPath) {
    print({ type: "session_start", sessionId: session.sessionId, transcriptPath: session.transcriptPath, resumed: true });
  }
  const ignored = ignoredNotice(root, loaded);
  if (ignored) print({ type: "notice", message: ignored, code: "untrusted_project_settings" });
  const unsandboxed = sandboxNotice(settings);
  if (unsandboxed) print({ type: "notice", message: unsandboxed, code: "sandbox_unavailable" });
  for (const notice of stateNotices) print({ type: "notice", message: notice, code: "state_moved_aside" });
  for (const notice of session.openNoticeEvents) print({ type: "notice", ...notice });
  for (const notice of message.notices) print({ type: "notice", message: notice });

  let stopReason = "error";
  let overBudget = false;
  try {
    // The answer is printed at turn_end, before the settle step's fold (a model call of its own).
    for await (const event of session.submit(message.text, abort.signal, { ...(message.images && { images: message.images }), ...(message.typed !== undefined && { typed: message.typed }) })) {
      print(event);
      if (event.type === "turn_end") stopReason = event.stopReason;
      if (event.type === "error" && event.kind === "budget") overBudget = true;
    }
    for await (const event of session.settle(abort.signal)) print(event);
  } finally {
    await session.close();
    removeHandlers();
    onStdoutClosed(undefined);
    await mcp.close();
  }
  if (endedBy !== undefined) {
    run.failure = { kind: "aborted", message: `interrupted by ${endedBy}` };
    return SIGNAL_EXIT_CODES[endedBy];
  }
  if (stopReason === "aborted") return EXIT_INTERRUPTED;
  // A budget (--budget, MAX_CONTEXT_TOKENS) too small for what must be sent is a configuration problem.
  if (overBudget && stopReason === "error") return 2;
  if (writeFailed) return 1;
  return stopReason === "completed" || stopReason === "incomplete" ? 0 : 1;
}
