/**
 * "The next request for the current session", built offline: load the session's transcript,
 * rebuild short-term memory (window, summary, working set, touched files), read the working
 * state, the instruction files and git status, and build — nothing is sent or written. Used by
 * `valarmind prompt --dry-run` and available to the agent for previews.
 */
import type { WorkspacePaths } from "../config/paths.ts";
import type { Settings } from "../config/settings-schema.ts";
import { ShortTermMemory } from "../memory/short-term.ts";
import { ExtractiveSummarizer } from "../memory/summary.ts";
import type { FunctionToolSpec } from "../model/types.ts";
import { damageNotice } from "../session/damaged-lines.ts";
import { findSession, latestSession, readSession, UnreadableTranscriptError, type ReadSessionResult, type SessionRef } from "../session/transcript.ts";
import { describeRenumbering } from "../session/turn-order.ts";
import { createStateStore } from "../store/create-state-store.ts";
import { snapshotSource } from "../memory/state-snapshot.ts";
import { buildRequest, exactCounter, type BuiltRequest } from "./builder.ts";
import { readGitInfo } from "./git-info.ts";
import { expandAttachmentsSafely } from "./attachment-files.ts";
import { readInstructionFiles } from "./instruction-files.ts";
import type { CurrentTask } from "./section.ts";

export interface NextRequestOptions {
  paths: WorkspacePaths;
  settings: Settings;
  /** The next user message; without one, a pending (unfinished) turn is previewed, else no task. */
  message?: string;
  /** Session id or prefix; default the latest session. */
  session?: string;
  tools?: readonly FunctionToolSpec[];
  budgetTokens?: number;
  now?: Date;
  /** False (`--no-context-files`): no instruction file is read. */
  contextFiles?: boolean;
  /** Where `@path` references and the AGENTS.md chain start (default: the process's current directory). */
  cwd?: string;
}

export interface NextRequest extends BuiltRequest {
  session: SessionRef | undefined;
  sessionId: string;
  turn: number;
  /** Things the reader should know (state recovered, window folded for the preview, no message). */
  notices: string[];
}

/** Session id shown for a workspace with no session yet (the real one is random). */
export const NEW_SESSION_ID = "new";

/** The transcript, read-only; one that cannot be read is told and previewed as a new session, as `chat --continue` would go on. */
function readForPreview(file: string, notices: string[]): ReadSessionResult | undefined {
  try {
    return readSession(file);
  } catch (error) {
    if (!(error instanceof UnreadableTranscriptError)) throw error;
    notices.push(`${error.message}; showing the first request of the new session 'chat --continue' would start`);
    return undefined;
  }
}

export async function buildNextRequest(options: NextRequestOptions): Promise<NextRequest> {
  const { paths, settings } = options;
  const ref = options.session ? findSession(paths, options.session) : latestSession(paths);
  const [count, stateRead, files, git] = await Promise.all([
    exactCounter(),
    createStateStore(paths).read(),
    readInstructionFiles(paths, { ...(options.cwd && { cwd: options.cwd }), ...(options.contextFiles === false && { contextFiles: false }) }),
    readGitInfo(paths.root),
  ]);
  const notices = [...stateRead.notices];
  const read = ref ? readForPreview(ref.file, notices) : undefined;
  if (read?.tornTail !== undefined) notices.push(`${ref?.file}: last line is incomplete (a crash mid-write); it is ignored here and recovered on resume`);
  if (ref && read && read.damaged.length > 0) notices.push(damageNotice(ref.file, read.damaged, false));
  if (read && read.renumbered.length > 0) notices.push(`${ref?.file}: turns written by two processes at once are renumbered: ${describeRenumbering(read.renumbered)}`);
  const memory = ShortTermMemory.fromRecords(read?.records ?? [], {
    shortBufferTurns: settings.shortBufferTurns,
    windowBlockTurns: settings.windowBlockTurns,
    workingSetTokens: settings.workingSetTokens,
    overflowPolicy: settings.overflowPolicy,
    countTokens: count,
  });
  // The agent slides the window at each turn end; a transcript that ends over the limit (the
  // agent stopped before sliding) is slid here as the next turn would, with the offline summarizer.
  const summarizer = new ExtractiveSummarizer();
  const firstInWindow = memory.window.span()?.first;
  let foldedThrough: number | undefined;
  while (memory.window.overflowBlock().length > 0) {
    const record = await memory.slide(summarizer);
    if (record?.kind === "summary") foldedThrough = record.through_turn;
  }
  if (foldedThrough !== undefined) {
    notices.push(`the window held more than ${settings.shortBufferTurns} turns: turns ${firstInWindow}–${foldedThrough} folded into the summary with the offline summarizer for this preview`);
  }

  let task: CurrentTask | undefined;
  let turn = memory.lastTurn + 1;
  if (options.message !== undefined) {
    // As the turn would record it: `@path` attachments expanded (images included, this turn only).
    const expanded = await expandAttachmentsSafely(options.message, { root: paths.root, ...(options.cwd && { cwd: options.cwd }) });
    notices.push(...expanded.notices.map((notice) => notice.message));
    task = { userText: expanded.text, items: [], ...(expanded.images.length > 0 && { images: expanded.images }) };
  } else if (memory.pending) {
    turn = memory.pending.turn;
    task = { userText: memory.pending.user, items: memory.pending.items, ...(memory.pending.context && { context: memory.pending.context }) };
    notices.push(`turn ${turn} never finished; previewing its retry`);
  } else {
    notices.push("no message given: the request has no current task (pass one: valarmind prompt --dry-run \"...\")");
  }

  const sessionId = read?.header.id ?? NEW_SESSION_ID;
  if (!ref) notices.push("no session yet in this workspace: showing the first request of a new session");
  const built = await buildRequest({
    settings,
    sessionId,
    turn,
    ...(options.now && { now: options.now }),
    ...(options.tools && { tools: options.tools }),
    sources: { state: stateRead.state, git, ...files, ...snapshotSource(memory, ref?.file ?? "state snapshot") },
    memory: memory.view(),
    ...(task && { task }),
    ...(options.budgetTokens !== undefined && { budgetTokens: options.budgetTokens }),
  });
  return { ...built, session: ref, sessionId, turn, notices };
}
