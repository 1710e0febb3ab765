/**
 * One step's request within a turn: the state read fresh (its notices told), the build input
 * from the session's sources and memory, a budget fold first when the plan asks for one (its own
 * step and events, ./fold-step.ts), then the build, its memory changes and its manifest on disk.
 *
 *   const built = await buildTurnStep(ctx, { task, step, turn, now, files, git, transcript, signal, emit, taken, afterFold });
 */
import type { Settings } from "../config/settings-schema.ts";
import type { ShortTermMemory } from "../memory/short-term.ts";
import { snapshotSource } from "../memory/state-snapshot.ts";
import type { Summarizer } from "../memory/summary.ts";
import { buildRequest, type BuildInput } from "../prompt/builder.ts";
import type { GitInfo } from "../prompt/git-info.ts";
import type { InstructionFiles } from "../prompt/instruction-files.ts";
import { writeManifest } from "../prompt/manifest.ts";
import type { CurrentTask } from "../prompt/section.ts";
import type { SessionTranscript } from "../session/transcript.ts";
import type { StateStore } from "../state/store.ts";
import type { ToolRegistry } from "../tools/registry.ts";
import { buildWithFolds } from "./fold-step.ts";
import type { FoldPlanner } from "./fold-planner.ts";
import type { TurnContextTaker } from "./turn-context-taker.ts";
import type { BuiltStep, TurnLoopEvent } from "./turn-loop.ts";

/** What every step of the session's turns is built from. */
export interface StepBuildContext {
  settings: Settings;
  sessionId: string;
  state: StateStore;
  tools: ToolRegistry;
  memory: ShortTermMemory;
  folds: FoldPlanner;
  summarizer: Summarizer;
}

export interface StepArgs {
  task: CurrentTask;
  step: number;
  turn: number;
  /** When the turn started: the request's clock. */
  now: Date;
  files: InstructionFiles;
  git: GitInfo | undefined;
  transcript: SessionTranscript;
  signal: AbortSignal;
  emit: (event: TurnLoopEvent) => void;
  taken: TurnContextTaker;
  /** After a budget fold's own step: tell its notices. */
  afterFold: () => void;
}

export async function buildTurnStep(ctx: StepBuildContext, args: StepArgs): Promise<BuiltStep> {
  const { turn, transcript, emit } = args;
  const stateRead = await ctx.state.read();
  for (const notice of stateRead.notices) emit({ type: "notice", message: notice });
  const input: BuildInput = {
    settings: ctx.settings,
    sessionId: ctx.sessionId,
    turn,
    step: args.step,
    now: args.now,
    tools: ctx.tools.specs(),
    sources: { ...args.files, state: stateRead.state, ...(args.git && { git: args.git }), ...snapshotSource(ctx.memory, transcript.file) },
    memory: ctx.memory.view(),
    task: args.task,
  };
  ctx.folds.noteInput(input);
  const built = await buildWithFolds({ ...input, previous: ctx.folds.prefix.previous }, ctx.summarizer, args.signal, args.afterFold);
  ctx.folds.noteBuilt(input, built);
  emit({ type: "memory_changed", records: [...ctx.memory.apply(built.changes, turn), ...args.taken.take(built.turnContext)] });
  const manifestPath = await writeManifest(transcript.dir, built.manifest);
  return {
    request: built.request,
    manifest: {
      path: manifestPath,
      totalTokens: built.manifest.total_tokens,
      budgetTokens: built.manifest.budget_tokens,
      stablePrefixTokens: built.manifest.stable_prefix_tokens,
    },
  };
}

/** The next request as it would be built now (no message, nothing written): its total tokens. */
export async function previewNextRequestTokens(ctx: StepBuildContext, files: Promise<InstructionFiles>, transcriptFile: string | undefined): Promise<number> {
  const [stateRead, read] = await Promise.all([ctx.state.read(), files]);
  const built = await buildRequest({
    settings: ctx.settings,
    sessionId: ctx.sessionId,
    turn: ctx.memory.lastTurn + 1,
    tools: ctx.tools.specs(),
    sources: { ...read, state: stateRead.state, ...snapshotSource(ctx.memory, transcriptFile ?? "state snapshot") },
    memory: ctx.memory.peek(),
  });
  return built.manifest.total_tokens;
}
