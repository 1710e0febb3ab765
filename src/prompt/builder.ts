/**
 * The prompt builder: every model call valarmind makes is assembled here, under a token budget,
 * in a prefix-cache-friendly order, and leaves a manifest. Stateless requests (no
 * previous_response_id, store:false) with a stable `prompt_cache_key` per session.
 *
 * How the agent calls it, once per model call (step) of a turn (`planRequest`: a request, or a
 * fold the session must run first; see src/agent/fold-step.ts):
 *
 *   const built = await buildRequest({
 *     settings, sessionId: session.id, turn, step, now: turnStartedAt,
 *     tools: registry.specs,
 *     sources: { ...instructionFiles, state, git },        // instruction-files.ts, StateStore, git-info.ts
 *     memory: memory.view(),                               // ShortTermMemory
 *     task: { userText, items: stepsSoFar },
 *   });
 *   session.append(memory.apply(built.changes, turn));     // budget folds/evictions become real
 *   const path = writeManifest(session.dir, built.manifest);
 *   for await (const event of client.stream(built.request, signal)) ...
 *   recordUsage(path, usage);
 *
 * Pure: inputs in, request and manifest out. No model call, no file written, no input mutated;
 * what the cutoff changed is in `changes`. A window fold the budget needs is either made before
 * the build (`folds`, by the session's fold step) or, in `buildRequest`, made offline by the
 * extractive summarizer (deterministic, no model); `planRequest` returns it as a plan instead.
 */
import type { Settings } from "../config/settings-schema.ts";
import type { MemoryChanges, MemoryView } from "../memory/short-term.ts";
import { ExtractiveSummarizer, foldTurns, type RollingSummary } from "../memory/summary.ts";
import { TouchedEntities } from "../memory/touched.ts";
import type { Turn, TurnContext } from "../memory/turn.ts";
import { reasoningFor } from "../model/client-factory.ts";
import type { FunctionToolSpec, ModelRequest } from "../model/types.ts";
import { STATE_TOKEN_CAP } from "../state/projection.ts";
import type { WorkingState } from "../state/schema.ts";
import { applyCutoff, type BlockFold, type CutoffResult, type FoldPlan } from "./cutoff.ts";
import type { GitInfo } from "./git-info.ts";
import type { DuplicateInstructionFile, RefusedInstructionFile } from "./instruction-files.ts";
import { MANIFEST_VERSION, type DroppedItem, type Manifest } from "./manifest-schema.ts";
import { promptText } from "./prompt-text.ts";
import type { Regions } from "./regions.ts";
import { comparePrefix, prefixPieces, type PrefixSnapshot } from "./prefix-break.ts";
import { contentHash, renderPass } from "./render-pass.ts";
import { toolPiece } from "./request-assembly.ts";
import type { CurrentTask, FoldAsk, InstructionFile, SectionContext } from "./section.ts";
import { mainTurnRegions } from "./standard-regions.ts";
import { volatileContextDelta } from "./sections/volatile-context.ts";
import { countTokensIfReady, loadTokenizer } from "../tokens/tokenizer.ts";

export type BuildSettings = Pick<Settings, "model" | "maxContextTokens" | "toolOutputTokens" | "windowBlockTurns" | "windowAnswerTokens" | "reasoningEffort"> & Partial<Pick<Settings, "wireApi">>;

export interface BuildInput {
  settings: BuildSettings;
  sessionId: string;
  turn: number;
  /** Model call within the turn (1 = the first; the tool loop adds steps). */
  step?: number;
  purpose?: Manifest["purpose"];
  /** When the turn started: volatile sections show it; never part of the stable prefix. */
  now?: Date;
  regions?: Regions;
  tools?: readonly FunctionToolSpec[];
  sources?: {
    coreRules?: string;
    /** The user's own AGENTS.md, then the repository's AGENTS.md / CLAUDE.md files root first (ADR 0079). */
    userInstructions?: InstructionFile;
    agentsInstructions?: readonly InstructionFile[];
    project?: InstructionFile;
    personal?: InstructionFile;
    state?: WorkingState;
    /** The snapshot the cached part shows (ADR 0063); without one, `state` is shown whole. */
    stateSnapshot?: { turn: number; state: WorkingState };
    /** The state as a window turn's state changes last showed it, when later than the snapshot. */
    stateSeen?: { turn: number; state: WorkingState };
    git?: GitInfo;
    /** Instruction files refused by confinement: not in the prompt, recorded as dropped. */
    refused?: readonly RefusedInstructionFile[];
    /** Instruction files with the same text as an earlier one: sent once, recorded as dropped. */
    duplicates?: readonly DuplicateInstructionFile[];
  };
  memory?: MemoryView;
  task?: CurrentTask;
  /** Summary requests: the turns being folded. */
  evictedTurns?: readonly Turn[];
  /** Fold requests (`foldRequestRegions`): which of the window's oldest turns to fold. */
  fold?: FoldAsk;
  /**
   * Folds of window blocks made before this build (the session's fold step), oldest first: the
   * cutoff uses them for the blocks they cover instead of folding those blocks itself.
   */
  folds?: readonly BlockFold[];
  /** The current task's files; default: files of in-progress tasks plus files named in the message. */
  attention?: readonly string[];
  /** Overrides settings.maxContextTokens (`--budget`). */
  budgetTokens?: number;
  /** The previous request of the session (its `prefix`), for the manifest's prefix record. */
  previous?: PrefixSnapshot;
  /** Manifest timestamp (tests). */
  clock?: () => Date;
}

export interface BuiltRequest {
  request: ModelRequest;
  manifest: Manifest;
  /** What the cutoff changed in short-term memory; apply with `ShortTermMemory.apply`. */
  changes: MemoryChanges;
  /** This request's pieces as sent: the next request of the session is compared with it. */
  prefix: PrefixSnapshot;
  /**
   * A turn request's per-turn part as sent (state changes, volatile context): the session keeps
   * it for the turn's later steps (`task.context`) and with the turn in the window (ADR 0074).
   * `state` is the working state its changes showed, when it showed any.
   */
  turnContext?: TurnContext & { state?: WorkingState };
}

/** What `planRequest` returns: the request, or the fold that must be made before it can be built. */
export type BuildPlan = { kind: "request"; built: BuiltRequest } | FoldPlan;

export type { BlockFold, FoldPlan } from "./cutoff.ts";

/** Exact o200k counter: loads the tokenizer (~10 ms from its cache) and counts memoised by content. */
export async function exactCounter(): Promise<(text: string) => number> {
  await loadTokenizer();
  return (text) => {
    const n = countTokensIfReady(text);
    if (n === undefined) throw new Error("tokenizer loaded but did not count (internal error)");
    return n;
  };
}

/** Files the current task is about: in-progress tasks' files and files named in the message. */
export function attentionFor(state: WorkingState | undefined, userText: string | undefined): string[] {
  const files = new Set<string>();
  for (const task of state?.tasks_open ?? []) {
    if (task.status === "in_progress") for (const f of task.files ?? []) files.add(f.toLowerCase());
  }
  if (userText) {
    const scratch = new TouchedEntities();
    scratch.observeText(userText, 0);
    for (const e of scratch.list("file")) files.add(e.name.toLowerCase());
  }
  return [...files];
}

/** One key per session: turn and summary (fold) requests share a prefix, so they share the cache. */
export function promptCacheKey(sessionId: string): string {
  return `valarmind-${sessionId}`;
}

function foldMadeFor(input: BuildInput, block: readonly Turn[]): BlockFold | undefined {
  const last = block.at(-1);
  return last ? input.folds?.find((fold) => fold.summary.throughTurn === last.turn) : undefined;
}

/** The request under budget; a window fold it needs and `folds` lacks is made offline (extractive, deterministic). */
export async function buildRequest(input: BuildInput): Promise<BuiltRequest> {
  const offline = new ExtractiveSummarizer();
  const plan = await assemble(input, async (previous: RollingSummary | undefined, block: readonly Turn[]) => {
    const made = foldMadeFor(input, block);
    if (made) return made;
    return { summary: await foldTurns(previous, block, offline), summarizer: offline.name, note: "" };
  });
  if (plan.kind === "fold") throw new Error("the offline fold left a plan (internal error)");
  return plan.built;
}

/**
 * The request under budget, or — when the budget needs a window block folded and `folds` has no
 * summary for it — that block as a plan: the caller folds it (a model call of its own) and plans
 * again with the fold added to `folds`.
 */
export function planRequest(input: BuildInput): Promise<BuildPlan> {
  return assemble(input, async (_previous, block) => foldMadeFor(input, block));
}

async function assemble(input: BuildInput, foldBlock: (previous: RollingSummary | undefined, block: readonly Turn[]) => Promise<BlockFold | undefined>): Promise<BuildPlan> {
  const count = await exactCounter();
  const regions = input.regions ?? mainTurnRegions();
  const budget = input.budgetTokens ?? input.settings.maxContextTokens;
  const purpose = input.purpose ?? "turn";
  const tools = input.tools ?? [];
  const toolPieces = tools.map(toolPiece);
  const memory = input.memory;
  const sources = input.sources ?? {};

  const ctx: SectionContext = {
    model: input.settings.model,
    sessionId: input.sessionId,
    turn: input.turn,
    now: input.now ?? new Date(),
    coreRules: sources.coreRules ?? promptText("core-rules"),
    ...(sources.userInstructions && { userInstructions: sources.userInstructions }),
    ...(sources.agentsInstructions && { agentsInstructions: sources.agentsInstructions }),
    project: sources.project,
    personal: sources.personal,
    summary: memory?.summary,
    turns: memory?.turns ?? [],
    windowBlockTurns: input.settings.windowBlockTurns,
    state: sources.state,
    stateSnapshot: sources.stateSnapshot,
    ...(sources.stateSeen && { stateSeen: sources.stateSeen }),
    stateCap: STATE_TOKEN_CAP,
    workingSet: memory?.workingSet ?? [],
    overflowPolicy: memory?.overflowPolicy ?? "priority",
    attention: input.attention ?? attentionFor(sources.state, input.task?.userText),
    touchedFiles: memory?.touchedFiles ?? [],
    touchedSymbols: memory?.touchedSymbols ?? [],
    git: sources.git,
    task: input.task,
    evictedTurns: input.evictedTurns ?? [],
    ...(input.fold && { fold: input.fold }),
    toolOutputTokens: input.settings.toolOutputTokens,
    answerTokens: input.settings.windowAnswerTokens,
    reasoningBack: input.settings.wireApi === "chat",
    count,
  };
  const rerender = (c: SectionContext) => renderPass(regions, c, tools, toolPieces, count);
  const first = await rerender(ctx);
  const cut: CutoffResult | FoldPlan =
    first.total > budget
      ? await applyCutoff({ ctx, first, budget, rerender, windowBlockTurns: input.settings.windowBlockTurns, foldBlock, count })
      : { kind: "cut", ctx, pass: first, steps: [], dropped: [], changes: {}, workingSetEvents: [] };
  if (cut.kind === "fold") return cut;
  const pass = cut.pass;

  const request: ModelRequest = {
    model: input.settings.model,
    instructions: pass.parts.instructions,
    input: pass.parts.input,
    tools: pass.parts.tools,
    prompt_cache_key: promptCacheKey(input.sessionId),
    store: false,
  };
  const reasoning = reasoningFor(input.settings);
  if (reasoning) {
    request.reasoning = reasoning;
    // Stateless requests (store: false): the reasoning of a step goes back to the next step only as its encrypted content.
    if (input.settings.wireApi !== "chat") request.include = ["reasoning.encrypted_content"];
  }

  const dropped: DroppedItem[] = [
    ...pass.failures.map((f): DroppedItem => ({ id: f.id, tokens: 0, reason: "section_error", detail: `section '${f.id}' (${f.region}) failed: ${f.error}` })),
    ...pass.duplicates.map((d): DroppedItem => ({ id: d.id, tokens: count(d.text), reason: "duplicate", detail: `same content as ${d.duplicateOf}, sent once` })),
    ...pass.pieces.flatMap((p) => (p.dropped ?? []).map((d): DroppedItem => ({ id: d.id, tokens: d.tokens ?? 0, reason: d.reason, ...(d.detail && { detail: d.detail }) }))),
    ...cut.dropped,
    ...(sources.refused ?? []).map((r): DroppedItem => ({ id: r.id, tokens: 0, reason: "refused_unsafe_file", detail: `${r.path}: ${r.reason}` })),
    ...(sources.duplicates ?? []).map((d): DroppedItem => ({ id: d.id, tokens: 0, reason: "duplicate", detail: `${d.path} has the same text as ${d.of}, sent once` })),
  ];

  const manifest: Manifest = {
    manifest_version: MANIFEST_VERSION,
    timestamp: (input.clock?.() ?? new Date()).toISOString(),
    session: input.sessionId,
    turn: input.turn,
    step: input.step ?? 1,
    purpose,
    model: input.settings.model,
    budget_tokens: budget,
    total_tokens: pass.total,
    framing_tokens: pass.total - pass.itemTokens,
    stable_prefix_tokens: pass.stablePrefix,
    prompt_cache_key: request.prompt_cache_key,
    regions: ["tools", ...regions.names()],
    items: pass.pieces.map((p) => ({
      id: p.id,
      type: p.type,
      region: p.region,
      format: p.format,
      placement: p.placement,
      tokens: p.tokens,
      stable: p.stable,
      reason: p.reason,
      ...(p.detail && { detail: p.detail }),
      hash: contentHash(p),
    })),
    dropped,
    cutoff_steps: cut.steps,
    memory_events: [...(memory?.events ?? []), ...cut.workingSetEvents].map((e) => ({ ...e })),
  };
  const pieces = prefixPieces(pass.pieces);
  manifest.prefix = comparePrefix(input.previous, pieces, count);
  const label = purpose === "turn" ? `turn ${input.turn} step ${input.step ?? 1}` : `${purpose} request at turn ${input.turn}`;
  const turnContext = purpose === "turn" ? sentTurnContext(cut.ctx, pass.pieces) : undefined;
  return { kind: "request", built: { request, manifest, changes: cut.changes, prefix: { label, pieces }, ...(turnContext && { turnContext }) } };
}

/** The per-turn part this request sent: the frozen one, or what its sections rendered (after any cutoff). */
function sentTurnContext(ctx: SectionContext, pieces: readonly { id: string; text?: string }[]): BuiltRequest["turnContext"] {
  const task = ctx.task;
  if (!task) return undefined;
  if (task.context) return task.context;
  const stateChanges = pieces.find((p) => p.id === "working_state_changes")?.text ?? "";
  const context = pieces.find((p) => p.id === "volatile_context")?.text ?? "";
  const shown = context === "" ? {} : volatileContextDelta(ctx).shown;
  return { stateChanges, context, shown, ...(stateChanges !== "" && ctx.state && { state: ctx.state }) };
}
