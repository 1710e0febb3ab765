/**
 * AgentSession owns one conversation: its transcript, short-term memory, tools and approvals.
 * `submit` runs one user turn and returns its event stream; the session persists by subscribing
 * to the turn loop's stream (the user's message first, so nothing typed is ever lost), runs a
 * budget fold as its own step before a build that needs one, and fsyncs at turn end. `settle`
 * then folds the window into the summary when it is full: a step of its own, after the answer.
 *
 *   const session = await AgentSession.open({ root, settings, model, interactive: false, resume: { kind: "new" } });
 *   for await (const event of session.submit("fix the test", signal)) render(event);
 *   for await (const event of session.settle(signal)) render(event);
 */
import { workspacePaths, type WorkspacePaths } from "../config/paths.ts";
import type { Settings } from "../config/settings-schema.ts";
import { foldTurns, ExtractiveSummarizer, type Summarizer } from "../memory/summary.ts";
import type { ShortTermMemory } from "../memory/short-term.ts";
import { finalAnswer } from "../memory/turn.ts";
import type { ModelClient, Usage } from "../model/types.ts";
import { buildRequest, exactCounter, type BuildInput } from "../prompt/builder.ts";
import type { GitInfo } from "../prompt/git-info.ts";
import type { ImageFileAttachment } from "../prompt/attachment-files.ts";
import { readInstructionFiles, type InstructionFileOptions, type InstructionFiles } from "../prompt/instruction-files.ts";
import { writeManifest } from "../prompt/manifest.ts";
import type { CurrentTask } from "../prompt/section.ts";
import type { NewRecord } from "../session/transcript-schema.ts";
import { lockSession, releaseSessionLock, type BusySessionPolicy } from "../session/session-lock.ts";
import { createSession, readSession, type SessionTranscript } from "../session/transcript.ts";
import type { HeldLock } from "../state/lock.ts";
import type { StateStore } from "../state/store.ts";
import { createStateStore } from "../store/create-state-store.ts";
import { createApprovalGate } from "../tools/approvals.ts";
import { createToolRegistry, type ToolRegistry } from "../tools/registry.ts";
import type { McpToolSet } from "../mcp/start-servers.ts";
import { describeError, ValarmindError } from "../errors.ts";
import { realpathSync } from "node:fs";
import { CheckpointStore } from "../checkpoints/checkpoint-store.ts";
import { TurnCheckpoints } from "../checkpoints/turn-checkpoints.ts";
import { NothingToUndoError, undoTurn, type UndoAction, type UndoOutcome } from "../checkpoints/undo.ts";
import { trace } from "../trace.ts";
import { EventStream } from "./event-channel.ts";
import type { AgentEvent, ApprovalDecision, TurnEndEvent } from "./events.ts";
import { buildWithFolds, foldWindowIfDue } from "./fold-step.ts";
import { ModelSummarizer } from "./model-summarizer.ts";
import { FoldPlanner } from "./fold-planner.ts";
import { SessionCost } from "./session-cost.ts";
import { applyPromotions } from "../memory/promotion.ts";
import { snapshotSource, takeStateSnapshot } from "../memory/state-snapshot.ts";
import { openSessionMemory, type OpenedMemory, type ResumeTarget, type SessionNotice } from "../memory/session-memory.ts";
import { recordTurnInMemory } from "../memory/turn-memory.ts";
import { failedOutcome, runTurnLoop, TurnStream, type BuiltStep, type TurnLoopDeps, type TurnLoopEvent, type TurnOutcome } from "./turn-loop.ts";
import { isRecordEvent, TurnRecorder, type RecordedRequest } from "./turn-recorder.ts";
import { TurnContextTaker } from "./turn-context-taker.ts";
import { openTurn, type TurnOpeningContext } from "./turn-opening.ts";

export interface AgentSessionOptions {
  root: string;
  settings: Settings;
  model: ModelClient;
  /** False for headless runs: approvals cannot be asked, so mutating calls follow the mode or are refused. */
  interactive: boolean;
  resume: ResumeTarget;
  /** Overrides the model-backed summarizer (tests, offline runs). */
  summarizer?: Summarizer;
  /**
   * When the session to resume is in use by another process: wait up to `waitMs` (headless
   * `--continue`), then fork. Default: fork at once (the REPL), ADR 0072.
   */
  busySession?: BusySessionPolicy;
  /** The run's MCP servers: their tools follow the built-in ones, their notices are told. The run closes them. */
  mcp?: McpToolSet;
  /** Where the run started: AGENTS.md files are read from the workspace root down to it, `@path` is resolved from it. Default: the process's. */
  cwd?: string;
  /** False (`--no-context-files`): no instruction file is read; only the core rules instruct. */
  contextFiles?: boolean;
}

/** What comes with a message besides its text. */
export interface SubmitOptions {
  /** Images given outside the message (`chat -p --image`), already read and checked. */
  images?: readonly ImageFileAttachment[];
}

export interface LastRequestInfo {
  manifestPath: string;
  totalTokens: number;
  budgetTokens: number;
  stablePrefixTokens: number;
  cachedShare: number | undefined;
}

/** How long close() waits for an aborted turn to record its end. */
const CLOSE_WAIT_MS = 3_000;

export class AgentSession {
  readonly paths: WorkspacePaths;
  readonly settings: Settings;
  readonly sessionId: string;
  readonly memory: ShortTermMemory;
  readonly tools: ToolRegistry;
  readonly state: StateStore;
  readonly resumed: boolean;
  /** Told at open: a recovered torn line, an unfinished turn, damaged lines, a fork. */
  readonly openNotices: string[];
  /** The same, with their notice codes (for `--json`). */
  readonly openNoticeEvents: SessionNotice[];
  lastRequest: LastRequestInfo | undefined;
  /** Usage of every request this session sent (turn and fold requests), for /cost and the status line. */
  readonly cost = new SessionCost();
  private transcript: SessionTranscript | undefined;
  /** Held from the first write (or the resume) to close: one writer per session (ADR 0072). */
  private lock: HeldLock | undefined;
  private busy = false;
  /** The turn or settle step running now: close() aborts it and waits for it to record its end. */
  private inFlight: { abort: () => void; done: Promise<void> } | undefined;
  /** A turn ended and its settle step (window fold, snapshot, working-set record) has not run yet. */
  private unsettled = false;
  private running: TurnStream<TurnLoopEvent> | undefined;
  private readonly summarizer: Summarizer;
  private readonly model: ModelClient;
  private readonly count: (text: string) => number;
  private pendingNotices: string[] = [];
  /** Usage of fold requests not yet told as `usage` events. */
  private pendingFoldUsage: Usage[] = [];
  private readonly mcp: McpToolSet | undefined;
  /** Refused instruction files already told this session (the manifest records them every call). */
  private readonly toldRefusals = new Set<string>();
  /** Folding by cost and fold requests that ride the cache (ADR 0074). */
  private readonly folds: FoldPlanner;
  private readonly cwd: string;
  private readonly instructionOptions: InstructionFileOptions;
  /** What each turn's file tools write, kept so the turn can be undone (ADR 0081). */
  private readonly checkpoints: TurnCheckpoints;
  /** What a turn's opening reads and moves on (./turn-opening.ts). */
  private readonly opening: TurnOpeningContext;

  private constructor(options: AgentSessionOptions, paths: WorkspacePaths, count: (text: string) => number, opened: OpenedMemory) {
    this.paths = paths;
    // Each session holds its own copy: /model changes this session only, and /clear starts from the configured settings.
    this.settings = structuredClone(options.settings);
    this.model = options.model;
    this.count = count;
    this.sessionId = opened.sessionId;
    this.transcript = opened.transcript;
    this.lock = opened.lock;
    this.memory = opened.memory;
    this.resumed = opened.resumed;
    this.mcp = options.mcp;
    this.cwd = options.cwd ?? process.cwd();
    this.instructionOptions = { cwd: this.cwd, ...(options.contextFiles === false && { contextFiles: false }) };
    this.openNoticeEvents = [...opened.notices, ...(options.mcp?.takeNotices() ?? [])];
    this.openNotices = this.openNoticeEvents.map((notice) => notice.message);
    this.state = createStateStore(this.paths);
    this.checkpoints = new TurnCheckpoints(new CheckpointStore(this.paths, this.sessionId), realpathSync(options.root));
    this.tools = createToolRegistry({
      root: options.root,
      settings: this.settings,
      interactive: options.interactive,
      approvals: createApprovalGate({ mode: this.settings.approvals, interactive: options.interactive }),
      stateStore: this.state,
      countTokens: count,
      outputDir: `${this.paths.sessionsDir}/${this.sessionId}/outputs`,
      extraTools: options.mcp?.tools ?? [],
      checkpoints: this.checkpoints,
    });
    this.folds = new FoldPlanner(this.settings, count);
    this.summarizer =
      options.summarizer ??
      new ModelSummarizer({
        model: options.model,
        settings: this.settings,
        sessionId: this.sessionId,
        sessionDir: `${this.paths.sessionsDir}/${this.sessionId}`,
        currentTurn: () => this.memory.lastTurn + 1,
        currentSummary: () => this.memory.summary,
        prefix: this.folds.prefix,
        foldContext: async () => this.folds.context(this.memory),
        onUsage: (usage) => {
          this.cost.add(usage, "fold");
          this.pendingFoldUsage.push(usage);
        },
        readState: async () => (await this.state.read()).state,
        promote: async (promotions) => void this.pendingNotices.push(...(await applyPromotions(this.state, promotions))),
        onFallback: (message) => this.pendingNotices.push(message),
        onNotice: (message) => this.pendingNotices.push(message),
      });
    this.opening = {
      paths: this.paths,
      cwd: this.cwd,
      memory: this.memory,
      checkpoints: this.checkpoints,
      approvals: this.tools.approvals,
      state: this.state,
      count,
      instructionOptions: this.instructionOptions,
      toldRefusals: this.toldRefusals,
    };
  }

  static async open(options: AgentSessionOptions): Promise<AgentSession> {
    const count = await exactCounter();
    const paths = workspacePaths(options.root);
    const opened = await openSessionMemory(paths, options.settings, options.resume, count, options.busySession);
    return new AgentSession(options, paths, count, opened);
  }

  /** Input + output tokens spent this session (turn and fold requests). */
  get sessionTokens(): number {
    const figures = this.cost.figures();
    return figures.input + figures.output;
  }

  get transcriptPath(): string | undefined {
    return this.transcript?.file;
  }

  get isBusy(): boolean {
    return this.busy;
  }

  /**
   * Runs one user turn: its event stream ends with `turn_end` (nothing of the turn comes after
   * it) and `result()` is the turn's outcome; `answer(id, decision)` answers its approval
   * requests. A window fold due after the turn is not part of it: `settle` runs it (a turn
   * submitted before that settles first). Aborting `signal` ends the turn cleanly.
   */
  submit(text: string, signal: AbortSignal, options: SubmitOptions = {}): TurnStream<AgentEvent> {
    const stream = new TurnStream<AgentEvent>();
    const emit = (event: AgentEvent) => stream.push(event);
    stream.answerBy((id, decision) => this.answer(id, decision));
    if (this.busy) {
      const message = "a turn is already running; wait for it or abort it first";
      emit({ type: "error", kind: "internal", message });
      stream.end(failedOutcome(this.memory.lastTurn, text, message));
      return stream;
    }
    this.busy = true;
    let ended = false;
    const tracked = (event: AgentEvent) => {
      if (event.type === "turn_end") ended = true;
      emit(event);
    };
    const own = new AbortController();
    const turnSignal = AbortSignal.any([signal, own.signal]);
    const run = async (): Promise<TurnOutcome> => {
      // A front end that did not settle the last turn: its fold runs first, as its own step.
      if (this.unsettled) await this.settleNow(turnSignal, emit);
      return this.runTurn(text, turnSignal, tracked, options);
    };
    const done = run().then(
      (outcome) => {
        this.busy = false;
        stream.end(outcome);
      },
      (error: unknown) => {
        const message = describeError(error);
        const hint = error instanceof ValarmindError ? error.hint : undefined;
        emit({ type: "error", kind: "internal", message, ...(hint !== undefined ? { hint } : {}) });
        if (!ended) emit({ type: "turn_end", turn: this.memory.lastTurn, text: "", stopReason: "error" });
        this.busy = false;
        stream.end(failedOutcome(this.memory.lastTurn, text, message));
      },
    );
    this.track(own, done);
    return stream;
  }

  private track(own: AbortController, done: Promise<unknown>): void {
    const entry = { abort: () => own.abort(), done: done.then(() => undefined) };
    this.inFlight = entry;
    void entry.done.then(() => {
      if (this.inFlight === entry) this.inFlight = undefined;
    });
  }

  /** Answers the running turn's `approval_request` with this id; false if none is waiting on it. */
  answer(id: string, decision: ApprovalDecision): boolean {
    return this.running?.answer(id, decision) ?? false;
  }

  /**
   * The step after a turn, started explicitly: when keeping the window's older turns costs more
   * than folding them, or the window is full, all but the last `windowBlockTurns` fold into the
   * summary (a fold request riding the turn request's cache, which may promote to state.json),
   * a state snapshot is taken at a fold and the working set is recorded (ADR 0074). Its events (`window_slid`,
   * notices, an `error` if the fold itself fails) are not the turn's; `result()` is whether the
   * window folded. Nothing to do (no turn since the last settle): an empty stream.
   */
  settle(signal: AbortSignal): EventStream<AgentEvent, boolean> {
    const stream = new EventStream<AgentEvent, boolean>();
    if (this.busy || !this.unsettled) {
      stream.end(false);
      return stream;
    }
    this.busy = true;
    const emit = (event: AgentEvent) => stream.push(event);
    const own = new AbortController();
    const done = this.settleNow(AbortSignal.any([signal, own.signal]), emit).then(
      (folded) => {
        this.busy = false;
        stream.end(folded);
      },
      (error: unknown) => {
        const message = describeError(error);
        const hint = error instanceof ValarmindError ? error.hint : undefined;
        emit({ type: "error", kind: "internal", message, ...(hint !== undefined ? { hint } : {}) });
        this.busy = false;
        stream.end(false);
      },
    );
    this.track(own, done);
    return stream;
  }

  private async ensureTranscript(emit: (event: AgentEvent) => void): Promise<SessionTranscript> {
    if (this.transcript) return this.transcript;
    // A new random id: nobody else can hold it, so this never waits.
    const locked = await lockSession(this.paths, this.sessionId, { waitMs: 0 });
    if (locked.kind === "held") this.lock = locked.lock;
    this.transcript = createSession(this.paths, { model: this.settings.model, cwd: this.paths.root, id: this.sessionId });
    emit({ type: "session_start", sessionId: this.sessionId, transcriptPath: this.transcript.file, resumed: false });
    return this.transcript;
  }

  private flushNotices(emit: (event: AgentEvent) => void): void {
    for (const message of this.pendingNotices.splice(0)) emit({ type: "notice", message });
    for (const usage of this.pendingFoldUsage.splice(0)) emit({ type: "usage", usage, cachedShare: usage.input > 0 ? usage.cached / usage.input : 0, purpose: "fold" });
    for (const notice of this.mcp?.takeNotices() ?? []) emit({ type: "notice", ...notice });
  }

  private async runTurn(typed: string, signal: AbortSignal, emit: (event: AgentEvent) => void, options: SubmitOptions): Promise<TurnOutcome> {
    const transcript = await this.ensureTranscript(emit);
    const { turn, text, images, startedAt, files, git } = await openTurn(this.opening, transcript, typed, signal, emit, options);

    const taken = new TurnContextTaker(turn, this.memory);
    const deps: TurnLoopDeps = {
      model: this.model,
      tools: this.tools,
      maxSteps: this.settings.maxStepsPerTurn,
      build: (task, step) => {
        const stream = new EventStream<TurnLoopEvent, BuiltStep>();
        const withImages: CurrentTask = taken.task(images.length > 0 ? { ...task, images } : task);
        this.buildStep(withImages, step, turn, startedAt, files, git, transcript, signal, (event) => stream.push(event), taken).then(
          (built) => stream.end(built),
          (error: unknown) => stream.fail(error),
        );
        return stream;
      },
      shrinkContext: () => this.foldOldestBlock(turn),
    };

    const recorder = new TurnRecorder(
      transcript,
      turn,
      this.count,
      (request) => this.noteRequest(request),
      (message) => emit({ type: "notice", message }),
    );
    // If persisting fails, the loop must stop too: nobody would record what it does next.
    const stop = new AbortController();
    const run = runTurnLoop(deps, turn, text, AbortSignal.any([signal, stop.signal]));
    this.running = run;
    let end: TurnEndEvent | undefined;
    try {
      for await (const event of run) {
        await recorder.record(event);
        if (event.type === "turn_end") end = event;
        else if (!isRecordEvent(event)) emit(event);
      }
    } catch (error) {
      stop.abort();
      throw error;
    } finally {
      this.running = undefined;
    }
    const outcome = await run.result();
    // The reason a turn failed stays with it, so `sessions show` and a later reader can tell why.
    if (outcome.error) transcript.append({ kind: "note", turn, what: `error:${outcome.error.kind}`, text: outcome.error.message });
    transcript.append({
      kind: "turn_end",
      turn,
      steps: outcome.steps,
      stop_reason: outcome.stopReason,
      ...(outcome.steps > 0 ? { usage: outcome.usage } : {}),
    });
    recordTurnInMemory(this.memory, taken.withContext(outcome.turn), recorder.summaries, { ttlTurns: this.settings.workingSetTtlTurns });
    transcript.sync();
    this.unsettled = true;
    this.flushNotices(emit);
    emit(end ?? { type: "turn_end", turn, text: finalAnswer(outcome.turn), stopReason: outcome.stopReason });
    return outcome;
  }

  /** One step's request: a budget fold first when the plan asks for one (its own step and events), then the build. */
  private async buildStep(
    task: CurrentTask,
    step: number,
    turn: number,
    now: Date,
    files: InstructionFiles,
    git: GitInfo | undefined,
    transcript: SessionTranscript,
    signal: AbortSignal,
    emit: (event: TurnLoopEvent) => void,
    taken: TurnContextTaker,
  ): Promise<BuiltStep> {
    const stateRead = await this.state.read();
    for (const notice of stateRead.notices) emit({ type: "notice", message: notice });
    const input: BuildInput = {
      settings: this.settings,
      sessionId: this.sessionId,
      turn,
      step,
      now,
      tools: this.tools.specs(),
      sources: { ...files, state: stateRead.state, ...(git && { git }), ...snapshotSource(this.memory, transcript.file) },
      memory: this.memory.view(),
      task,
    };
    this.folds.noteInput(input);
    const built = await buildWithFolds({ ...input, previous: this.folds.prefix.previous }, this.summarizer, signal, () => this.flushNotices(emit));
    this.folds.noteBuilt(input, built);
    emit({ type: "memory_changed", records: [...this.memory.apply(built.changes, turn), ...taken.take(built.turnContext)] });
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

  /** The status line's figures: the last request built, and the session's tokens once its usage is in. */
  private noteRequest(request: RecordedRequest): void {
    const { manifest, usage } = request;
    const cachedShare = usage ? (usage.input > 0 ? usage.cached / usage.input : 0) : undefined;
    if (usage) this.cost.add(usage, "turn");
    this.lastRequest = { manifestPath: manifest.path, totalTokens: manifest.totalTokens, budgetTokens: manifest.budgetTokens, stablePrefixTokens: manifest.stablePrefixTokens, cachedShare };
  }

  /** The settle step's work (see `settle`). */
  private async settleNow(signal: AbortSignal, emit: (event: AgentEvent) => void): Promise<boolean> {
    this.unsettled = false;
    const transcript = this.transcript;
    if (!transcript) return false;
    const turn = this.memory.lastTurn;
    const folded = await this.slideWindow(transcript, signal, emit);
    // The cached part of the next request breaks here anyway (the summary changed), so the state
    // snapshot it shows can catch up for free (ADR 0063, ADR 0074); between folds, state changes
    // travel after the user's message.
    if (folded) await takeStateSnapshot(this.state, this.memory, transcript, turn);
    const ws = this.memory.workingSetRecord(turn);
    if (ws) transcript.append(ws);
    transcript.sync();
    this.flushNotices(emit);
    return folded;
  }

  private async slideWindow(transcript: SessionTranscript, signal: AbortSignal, emit: (event: AgentEvent) => void): Promise<boolean> {
    const before = this.memory.window.size;
    const fold = await foldWindowIfDue(this.memory, this.summarizer, this.folds, signal, this.pendingNotices);
    if (fold?.kind !== "summary") return false;
    transcript.append(fold);
    emit({ type: "window_slid", foldedTurns: before - this.memory.window.size, summaryTokens: fold.tokens ?? this.count(fold.text) });
    return true;
  }


  /** After `context_length_exceeded`: fold the oldest window block into the summary; its records, or undefined if the window is empty. */
  private async foldOldestBlock(turn: number): Promise<NewRecord[] | undefined> {
    const block = this.memory.window.oldestBlock();
    const last = block.at(-1);
    if (!last) return undefined;
    const summary = await foldTurns(this.memory.summary, block, new ExtractiveSummarizer());
    return this.memory.apply({ fold: { summary, throughTurn: last.turn, summarizer: "extractive" } }, turn);
  }

  /**
   * `/compact`: folds the whole window into the rolling summary now (the model summarizer, with
   * the offline one as fallback). Returns how many turns were folded.
   */
  async compactConversation(signal?: AbortSignal): Promise<number> {
    const turns = [...this.memory.window.turns];
    const last = turns.at(-1);
    if (!last) return 0;
    const transcript = this.transcript;
    if (!transcript) return 0;
    const summary = await foldTurns(this.memory.summary, turns, this.summarizer, signal);
    transcript.append(this.memory.apply({ fold: { summary, throughTurn: last.turn, summarizer: this.summarizer.name } }, last.turn));
    transcript.sync();
    return turns.length;
  }

  /** The next request as it would be built now (no message, nothing written): its total tokens. */
  async previewTokens(): Promise<number> {
    const [stateRead, files] = await Promise.all([this.state.read(), readInstructionFiles(this.paths, this.instructionOptions)]);
    const built = await buildRequest({
      settings: this.settings,
      sessionId: this.sessionId,
      turn: this.memory.lastTurn + 1,
      tools: this.tools.specs(),
      sources: { ...files, state: stateRead.state, ...snapshotSource(this.memory, this.transcript?.file ?? "state snapshot") },
      memory: this.memory.peek(),
    });
    return built.manifest.total_tokens;
  }

  /**
   * `/undo` and `/redo` (ADR 0081): gives back the files of this session's last not-undone turn
   * as they were before it, or writes the last undone turn's result again; recorded in the
   * transcript. Throws (nothing changed) when there is nothing to do or a file changed since.
   */
  async undo(action: UndoAction, options: { force?: boolean } = {}): Promise<UndoOutcome> {
    if (this.busy) throw new ValarmindError(`a turn is running; ${action} when it has ended`);
    const transcript = this.transcript;
    if (!transcript) throw new NothingToUndoError(`nothing to ${action}: this session has no turn yet`);
    this.busy = true;
    try {
      const outcome = await undoTurn({
        action,
        root: this.tools.root,
        paths: this.paths,
        sessionId: this.sessionId,
        records: readSession(transcript.file).records,
        force: options.force === true,
      });
      transcript.append(outcome.record);
      transcript.sync();
      // What the window and working set hold of these files is no longer what is on disk; the next message says so.
      this.memory.noteRewind({ kind: action, of_turn: outcome.turn, files: outcome.files.map((file) => file.path) });
      return outcome;
    } finally {
      this.busy = false;
    }
  }

  setModel(model: string): void {
    this.settings.model = model;
  }

  async close(): Promise<void> {
    // A turn still running (a signal ended the REPL mid-answer) is aborted and given a moment to
    // record its end; its transcript must not be closed, nor its lock released, under it.
    const running = this.inFlight;
    if (running) {
      running.abort();
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([running.done, new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_WAIT_MS)))]);
      clearTimeout(timer);
    }
    this.transcript?.close();
    const lock = this.lock;
    this.lock = undefined;
    const failed = await releaseSessionLock(lock);
    // Not fatal: a lock left behind names this (ended) pid, so the next writer takes it over.
    if (failed !== undefined) trace(`session ${this.sessionId}: could not release its lock: ${failed}`);
  }
}
