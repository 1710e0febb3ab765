/**
 * What a turn does before its first request, in this order: `@path` attachments expanded into the
 * message (ADR 0079), files undone or redone since the last message noted in it, checkpoints and
 * approval confirmations moved to the new turn, **the user's message on disk** (before anything
 * can fail), then the instruction files and git status read, the state snapshot taken if this
 * transcript has none, and refused instruction files told once per session.
 *
 *   const opened = await openTurn(ctx, transcript, typed, signal, emit, { images });
 *   // opened.turn, opened.text (as recorded), opened.images, opened.files, opened.git
 */
import type { WorkspacePaths } from "../config/paths.ts";
import type { ShortTermMemory } from "../memory/short-term.ts";
import { stateSnapshotOf, takeStateSnapshot } from "../memory/state-snapshot.ts";
import { expandAttachmentsSafely, type ImageFileAttachment } from "../prompt/attachment-files.ts";
import { readGitInfo, type GitInfo } from "../prompt/git-info.ts";
import { readInstructionFiles, refusedInstructionNotice, type InstructionFileOptions, type InstructionFiles } from "../prompt/instruction-files.ts";
import type { AttachedImage } from "../prompt/section.ts";
import type { SessionTranscript } from "../session/transcript.ts";
import type { StateStore } from "../state/store.ts";
import type { ApprovalGate } from "../tools/approvals.ts";
import type { TurnCheckpoints } from "../checkpoints/turn-checkpoints.ts";
import { withUndoNote } from "../checkpoints/undo-note.ts";
import { trace } from "../trace.ts";
import { TYPED_AS_NOTE } from "../session/past-turns.ts";
import type { AgentEvent } from "./events.ts";

/** What of the session a turn's opening reads and moves on. */
export interface TurnOpeningContext {
  paths: WorkspacePaths;
  cwd: string;
  memory: ShortTermMemory;
  checkpoints: TurnCheckpoints;
  approvals: ApprovalGate;
  state: StateStore;
  count: (text: string) => number;
  instructionOptions: InstructionFileOptions;
  /** Refusal notices already told this session (each is told once). */
  toldRefusals: Set<string>;
}

export interface OpenedTurn {
  turn: number;
  /** The message as recorded: attachments expanded, the undo note added. */
  text: string;
  images: readonly AttachedImage[];
  startedAt: Date;
  files: InstructionFiles;
  git: GitInfo | undefined;
}

export async function openTurn(
  ctx: TurnOpeningContext,
  transcript: SessionTranscript,
  typed: string,
  signal: AbortSignal,
  emit: (event: AgentEvent) => void,
  options: { images?: readonly ImageFileAttachment[]; typed?: string },
): Promise<OpenedTurn> {
  // `@path` attachments become part of the message as it is recorded, so the window, the
  // summary and a resumed session carry the same text (ADR 0079); images ride with this turn only.
  const expanded = await expandAttachmentsSafely(typed, { root: ctx.paths.root, cwd: ctx.cwd, ...(options.images && { images: options.images }) });
  for (const notice of expanded.notices) emit({ type: "notice", message: notice.message, code: notice.code });
  // Files undone or redone since the last message: the conversation still shows them as before.
  const rewinds = ctx.memory.takeRewinds();
  const text = withUndoNote(expanded.text, rewinds);
  if (rewinds.length > 0) emit({ type: "notice", message: `told the model what changed on disk since the last turn: ${rewinds.map((r) => `/${r.kind} of turn ${r.of_turn} (${r.files.length} file${r.files.length === 1 ? "" : "s"})`).join(", ")}` });
  const turn = ctx.memory.lastTurn + 1;
  const startedAt = new Date();
  ctx.memory.workingSet.setTurn(turn);
  ctx.checkpoints.beginTurn(turn);
  for (const expired of ctx.approvals.beginTurn(turn)) {
    emit({ type: "notice", message: `the confirmation for ${expired.description} expired after 3 turns without an answer` });
  }
  // The user's message reaches the disk before anything can fail.
  transcript.append({ kind: "user", turn, text, tokens: ctx.count(text) });
  // A note, not a field: transcripts stay readable by valarmind versions that do not know it.
  if (options.typed !== undefined && options.typed !== typed) transcript.append({ kind: "note", turn, what: TYPED_AS_NOTE, text: options.typed });
  transcript.sync();
  ctx.memory.lastTurn = turn;
  emit({ type: "turn_start", turn, userText: expanded.text });

  const [files, git] = await Promise.all([readInstructionFiles(ctx.paths, ctx.instructionOptions), readGitInfo(ctx.paths.root, signal)]);
  if (!stateSnapshotOf(ctx.memory, transcript.file)) await takeStateSnapshot(ctx.state, ctx.memory, transcript, turn);
  for (const refused of files.refused) {
    const message = refusedInstructionNotice(refused);
    if (ctx.toldRefusals.has(message)) continue;
    ctx.toldRefusals.add(message);
    emit({ type: "notice", message, code: "instruction_file_refused" });
  }
  trace(`turn ${turn}: instructions and git status read`);
  return { turn, text, images: expanded.images, startedAt, files, git };
}
