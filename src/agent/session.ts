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
import type { Summarizer } from "../memory/summary.ts";
import type { ShortTermMemory } from "../memory/short-term.ts";
import { finalAnswer } from "../memory/turn.ts";
import type { ModelClient, Usage } from "../model/types.ts";
import { exactCounter } from "../prompt/builder.ts";
import { readInstructionFiles, type InstructionFileOptions } from "../prompt/instruction-files.ts";
import type { CurrentTask } from "../prompt/section.ts";
import { lockSession, releaseSessionLock } from "../session/session-lock.ts";
import { createSession, type SessionTranscript } from "../session/transcript.ts";
import type { HeldLock } from "../state/lock.ts";
import type { StateStore } from "../state/store.ts";
import { createStateStore, storeChoiceFromSettings } from "../store/create-state-store.ts";
import { createApprovalGate } from "../tools/approvals.ts";
import { createToolRegistry, type ToolRegistry } from "../tools/registry.ts";
import type { McpToolSet } from "../mcp/start-servers.ts";
import { describeError, ValarmindError } from "../errors.ts";
import { realpathSync } from "node:fs";
import { CheckpointStore } from "../checkpoints/checkpoint-store.ts";
import { TurnCheckpoints } from "../checkpoints/turn-checkpoints.ts";
import type { UndoAction, UndoOutcome } from "../checkpoints/undo.ts";
import { undoInSession } from "./session-undo.ts";
import { trace } from "../trace.ts";
import { EventStream } from "./event-channel.ts";
import type { AgentEvent, ApprovalDecision } from "./events.ts";
import { compactWindow, foldOldestBlockOffline, settleWindow, type SettleContext } from "./fold-step.ts";
import { buildTurnStep, previewNextRequestTokens, type StepBuildContext } from "./turn-step-request.ts";
import type { AgentSessionOptions, LastRequestInfo, SubmitOptions } from "./session-options.ts";
import { sessionSummarizer } from "./session-summarizer.ts";
import { FoldPlanner } from "./fold-planner.ts";
import { pricesFor, SessionCost } from "./session-cost.ts";
import { openSessionMemory, type OpenedMemory, type SessionNotice } from "../memory/session-memory.ts";
import { recordTurnInMemory } from "../memory/turn-memory.ts";
import { failedOutcome, runTurnLoop, TurnStream, type BuiltStep, type TurnLoopDeps, type TurnLoopEvent, type TurnOutcome } from "./turn-loop.ts";
import { TurnRecorder, type RecordedRequest } from "./turn-recorder.ts";
import { TurnContextTaker } from "./turn-context-taker.ts";
import { openTurn, type TurnOpeningContext } from "./turn-opening.ts";

export type { AgentSessionOptions, LastRequestInfo, SubmitOptions } from "./session-options.ts";

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
  /** The conversation the transcript held when the session opened (resumed or forked), for a front end to show. */
  readonly earlier: OpenedMemory["earlier"];
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
  private readonly pendingNotices: string[] = [];
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
    this.earlier = opened.earlier;
    this.mcp = options.mcp;
    this.cwd = options.cwd ?? process.cwd();
    this.instructionOptions = { cwd: this.cwd, ...(options.contextFiles === false && { contextFiles: false }) };
    this.openNoticeEvents = [...opened.notices, ...(options.mcp?.takeNotices() ?? [])];
    this.openNotices = this.openNoticeEvents.map((notice) => notice.message);
    this.state = createStateStore(this.paths, storeChoiceFromSettings(this.settings));
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
      transcript: () => this.transcript?.file,
    });
    this.folds = new FoldPlanner(this.settings, count);
    this.summarizer =
      options.summarizer ??
      sessionSummarizer({
        model: options.model,
        settings: this.settings,
        sessionId: this.sessionId,
        sessionDir: `${this.paths.sessionsDir}/${this.sessionId}`,
        memory: this.memory,
        folds: this.folds,
        state: this.state,
        notices: this.pendingNotices,
        onUsage: (usage) => {
          this.cost.add(usage, "fold", pricesFor(this.settings));
          this.pendingFoldUsage.push(usage);
        },
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
    let ended = false;
    const tracked = (event: AgentEvent) => {
      if (event.type === "turn_end") ended = true;
      emit(event);
    };
    // Every submit's stream ends with turn_end (ADR 0073), a failed one's too.
    const failed = (message: string): TurnOutcome => {
      if (!ended) emit({ type: "turn_end", turn: this.memory.lastTurn, text: "", stopReason: "error" });
      return failedOutcome(this.memory.lastTurn, text, message);
    };
    if (this.busy) {
      const message = "a turn is already running; wait for it or abort it first";
      emit({ type: "error", kind: "internal", message });
      stream.end(failed(message));
      return stream;
    }
    this.runExclusive(
      stream,
      signal,
      async (turnSignal) => {
        // A front end that did not settle the last turn: its fold runs first, as its own step.
        if (this.unsettled) await this.settleNow(turnSignal, emit);
        return this.runTurn(text, turnSignal, tracked, options);
      },
      failed,
    );
    return stream;
  }

  /**
   * Runs `work` as the session's one step in flight (busy until it ends; close() aborts it): its
   * result ends `stream`; a throw is told as an `error` event and `failed` gives the result.
   */
  private runExclusive<R>(stream: EventStream<AgentEvent, R>, signal: AbortSignal, work: (signal: AbortSignal) => Promise<R>, failed: (message: string) => R): void {
    this.busy = true;
    const own = new AbortController();
    const done = work(AbortSignal.any([signal, own.signal])).then(
      (result) => {
        this.busy = false;
        stream.end(result);
      },
      (error: unknown) => {
        const message = describeError(error);
        const hint = error instanceof ValarmindError ? error.hint : undefined;
        stream.push({ type: "error", kind: "internal", message, ...(hint !== undefined ? { hint } : {}) });
        const result = failed(message);
        this.busy = false;
        stream.end(result);
      },
    );
    this.track(own, done);
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
    this.runExclusive(stream, signal, (settleSignal) => this.settleNow(settleSignal, (event) => stream.push(event)), () => false);
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
        const emitStep = (event: TurnLoopEvent) => stream.push(event);
        buildTurnStep(this.memoryWork(), { task: withImages, step, turn, now: startedAt, files, git, transcript, signal, emit: emitStep, taken, afterFold: () => this.flushNotices(emitStep) }).then(
          (built) => stream.end(built),
          (error: unknown) => stream.fail(error),
        );
        return stream;
      },
      shrinkContext: () => foldOldestBlockOffline(this.memory, turn),
      windowCallIds: () => this.memory.window.callIds(),
    };

    const recorder = new TurnRecorder(
      transcript,
      turn,
      this.count,
      (request) => this.noteRequest(request),
      (message) => emit({ type: "notice", message }),
    );
    const stop = new AbortController();
    const run = runTurnLoop(deps, turn, text, AbortSignal.any([signal, stop.signal]));
    this.running = run;
    const { outcome, end } = await recorder.follow(run, emit, () => stop.abort()).finally(() => (this.running = undefined));
    recordTurnInMemory(this.memory, taken.withContext(outcome.turn), recorder.summaries, { ttlTurns: this.settings.workingSetTtlTurns });
    transcript.sync();
    this.unsettled = true;
    this.flushNotices(emit);
    emit(end ?? { type: "turn_end", turn, text: finalAnswer(outcome.turn), stopReason: outcome.stopReason });
    return outcome;
  }

  /** The status line's figures: the last request built, and the session's tokens once its usage is in. */
  private noteRequest(request: RecordedRequest): void {
    const { manifest, usage } = request;
    const cachedShare = usage ? (usage.input > 0 ? usage.cached / usage.input : 0) : undefined;
    if (usage) this.cost.add(usage, "turn", pricesFor(this.settings));
    this.lastRequest = { manifestPath: manifest.path, totalTokens: manifest.totalTokens, budgetTokens: manifest.budgetTokens, stablePrefixTokens: manifest.stablePrefixTokens, cachedShare };
  }

  /** The settle step's work (see `settle`). */
  private async settleNow(signal: AbortSignal, emit: (event: AgentEvent) => void): Promise<boolean> {
    this.unsettled = false;
    if (!this.transcript) return false;
    const folded = await settleWindow(this.memoryWork(), this.transcript, signal, emit);
    this.flushNotices(emit);
    return folded;
  }

  private memoryWork(): SettleContext & StepBuildContext {
    return { memory: this.memory, state: this.state, summarizer: this.summarizer, folds: this.folds, count: this.count, notices: this.pendingNotices, settings: this.settings, sessionId: this.sessionId, tools: this.tools };
  }

  /**
   * `/compact`: folds the whole window into the rolling summary now (the model summarizer, with
   * the offline one as fallback). Returns how many turns were folded.
   */
  async compactConversation(signal?: AbortSignal): Promise<number> {
    return this.transcript ? compactWindow(this.memory, this.summarizer, this.transcript, signal) : 0;
  }

  /** The next request as it would be built now (no message, nothing written): its total tokens. */
  async previewTokens(): Promise<number> {
    return previewNextRequestTokens(this.memoryWork(), readInstructionFiles(this.paths, this.instructionOptions), this.transcript?.file);
  }

  /**
   * `/undo` and `/redo` (ADR 0081): gives back the files of this session's last not-undone turn
   * as they were before it, or writes the last undone turn's result again; recorded in the
   * transcript. Throws (nothing changed) when there is nothing to do or a file changed since.
   */
  async undo(action: UndoAction, options: { force?: boolean } = {}): Promise<UndoOutcome> {
    if (this.busy) throw new ValarmindError(`a turn is running; ${action} when it has ended`);
    this.busy = true;
    try {
      return await undoInSession({ root: this.tools.root, paths: this.paths, sessionId: this.sessionId, transcript: this.transcript, memory: this.memory }, action, options.force === true);
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
