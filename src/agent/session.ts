/**
 * AgentSession owns one conversation: its transcript, short-term memory, tools and approvals.
 * `submit` runs one user turn and returns its events; the session persists everything as it
 * happens (the user's message first, so nothing typed is ever lost), applies the builder's
 * budget changes, folds the window into the summary when it is full, and fsyncs at turn end.
 *
 *   const session = await AgentSession.open({ root, settings, model, interactive: false, resume: { kind: "new" } });
 *   for await (const event of session.submit("fix the test", signal)) render(event);
 */
import { workspacePaths, type WorkspacePaths } from "../config/paths.ts";
import type { Settings } from "../config/settings-schema.ts";
import { foldTurns, ExtractiveSummarizer, type Summarizer } from "../memory/summary.ts";
import type { ShortTermMemory } from "../memory/short-term.ts";
import { finalAnswer, type Turn } from "../memory/turn.ts";
import type { ModelClient } from "../model/types.ts";
import { buildRequest, exactCounter } from "../prompt/builder.ts";
import { readGitInfo } from "../prompt/git-info.ts";
import { readInstructionFiles, refusedInstructionNotice } from "../prompt/instruction-files.ts";
import { recordUsage, writeManifest } from "../prompt/manifest.ts";
import { lockSession, releaseSessionLock, type BusySessionPolicy } from "../session/session-lock.ts";
import { createSession, type SessionTranscript } from "../session/transcript.ts";
import type { HeldLock } from "../state/lock.ts";
import { StateStore } from "../state/store.ts";
import { createApprovalGate } from "../tools/approvals.ts";
import { createToolRegistry, type ToolRegistry } from "../tools/registry.ts";
import { ValarmindError } from "../errors.ts";
import { trace } from "../trace.ts";
import { EventChannel } from "./event-channel.ts";
import type { AgentEvent } from "./events.ts";
import { ModelSummarizer } from "./model-summarizer.ts";
import { applyPromotions } from "./promotion.ts";
import { snapshotSource, stateSnapshotOf, takeStateSnapshot } from "./state-snapshot.ts";
import { openSessionMemory, type OpenedMemory, type ResumeTarget, type SessionNotice } from "./session-memory.ts";
import { toolMemory, type ToolMemory } from "./tool-memory.ts";
import { recordTurnInMemory } from "./turn-memory.ts";
import { runTurnLoop, type BuiltStep, type TurnLoopDeps } from "./turn-loop.ts";

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
}

export interface LastRequestInfo {
  manifestPath: string;
  totalTokens: number;
  budgetTokens: number;
  stablePrefixTokens: number;
  cachedShare: number | undefined;
}

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
  sessionTokens = 0;
  private transcript: SessionTranscript | undefined;
  /** Held from the first write (or the resume) to close: one writer per session (ADR 0072). */
  private lock: HeldLock | undefined;
  private busy = false;
  private readonly summarizer: Summarizer;
  private readonly model: ModelClient;
  private readonly count: (text: string) => number;
  private pendingNotices: string[] = [];
  /** Refused instruction files already told this session (the manifest records them every call). */
  private readonly toldRefusals = new Set<string>();

  private constructor(options: AgentSessionOptions, paths: WorkspacePaths, count: (text: string) => number, opened: OpenedMemory) {
    this.paths = paths;
    this.settings = options.settings;
    this.model = options.model;
    this.count = count;
    this.sessionId = opened.sessionId;
    this.transcript = opened.transcript;
    this.lock = opened.lock;
    this.memory = opened.memory;
    this.resumed = opened.resumed;
    this.openNoticeEvents = opened.notices;
    this.openNotices = opened.notices.map((notice) => notice.message);
    this.state = new StateStore(this.paths);
    this.tools = createToolRegistry({
      root: options.root,
      settings: options.settings,
      interactive: options.interactive,
      approvals: createApprovalGate({ mode: options.settings.approvals, interactive: options.interactive }),
      stateStore: this.state,
      countTokens: count,
      outputDir: `${this.paths.sessionsDir}/${this.sessionId}/outputs`,
    });
    this.summarizer =
      options.summarizer ??
      new ModelSummarizer({
        model: options.model,
        settings: options.settings,
        sessionId: this.sessionId,
        sessionDir: `${this.paths.sessionsDir}/${this.sessionId}`,
        currentTurn: () => this.memory.lastTurn + 1,
        currentSummary: () => this.memory.summary,
        readState: async () => (await this.state.read()).state,
        promote: async (promotions) => void this.pendingNotices.push(...(await applyPromotions(this.state, promotions))),
        onFallback: (message) => this.pendingNotices.push(message),
      });
  }

  static async open(options: AgentSessionOptions): Promise<AgentSession> {
    const count = await exactCounter();
    const paths = workspacePaths(options.root);
    const opened = await openSessionMemory(paths, options.settings, options.resume, count, options.busySession);
    return new AgentSession(options, paths, count, opened);
  }

  get transcriptPath(): string | undefined {
    return this.transcript?.file;
  }

  get isBusy(): boolean {
    return this.busy;
  }

  /** Runs one user turn. The iterable ends after `turn_end`; aborting `signal` ends the turn cleanly. */
  submit(text: string, signal: AbortSignal): AsyncIterable<AgentEvent> {
    const channel = new EventChannel<AgentEvent>();
    const emit = (event: AgentEvent) => channel.push(event);
    if (this.busy) {
      emit({ type: "error", kind: "internal", message: "a turn is already running; wait for it or abort it first" });
      channel.close();
      return channel;
    }
    this.busy = true;
    let ended = false;
    const tracked = (event: AgentEvent) => {
      if (event.type === "turn_end") ended = true;
      emit(event);
    };
    this.runTurn(text, signal, tracked)
      .catch((error: unknown) => {
        const message = error instanceof Error ? error.message : String(error);
        const hint = error instanceof ValarmindError ? error.hint : undefined;
        emit({ type: "error", kind: "internal", message, ...(hint !== undefined ? { hint } : {}) });
        // A failure after the answer (folding the window) must not end the turn a second time.
        if (!ended) emit({ type: "turn_end", turn: this.memory.lastTurn, text: "", stopReason: "error" });
      })
      .finally(() => {
        this.busy = false;
        channel.close();
      });
    return channel;
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
  }

  private async runTurn(text: string, signal: AbortSignal, emit: (event: AgentEvent) => void): Promise<void> {
    const transcript = await this.ensureTranscript(emit);
    const turn = this.memory.lastTurn + 1;
    const startedAt = new Date();
    this.memory.workingSet.setTurn(turn);
    for (const expired of this.tools.approvals.beginTurn(turn)) {
      emit({ type: "notice", message: `the confirmation for ${expired.description} expired after 3 turns without an answer` });
    }
    // The user's message reaches the disk before anything can fail.
    transcript.append({ kind: "user", turn, text, tokens: this.count(text) });
    transcript.sync();
    this.memory.lastTurn = turn;
    emit({ type: "turn_start", turn, userText: text });

    const [files, git] = await Promise.all([readInstructionFiles(this.paths), readGitInfo(this.paths.root, signal)]);
    if (!stateSnapshotOf(this.memory, transcript.file)) await takeStateSnapshot(this.state, this.memory, transcript, turn);
    for (const refused of files.refused) {
      const message = refusedInstructionNotice(refused);
      if (this.toldRefusals.has(message)) continue;
      this.toldRefusals.add(message);
      emit({ type: "notice", message, code: "instruction_file_refused" });
    }
    trace(`turn ${turn}: instructions and git status read`);
    const summaries = new Map<string, ToolMemory>();
    const manifestPaths = new WeakMap<BuiltStep, string>();

    const deps: TurnLoopDeps = {
      model: this.model,
      tools: this.tools,
      maxSteps: this.settings.maxStepsPerTurn,
      build: async (task, step) => {
        const stateRead = await this.state.read();
        for (const notice of stateRead.notices) emit({ type: "notice", message: notice });
        const built = await buildRequest({
          settings: this.settings,
          sessionId: this.sessionId,
          turn,
          step,
          now: startedAt,
          tools: this.tools.specs(),
          sources: { ...files, state: stateRead.state, ...(git && { git }), ...snapshotSource(this.memory, transcript.file) },
          memory: this.memory.view(),
          task,
          summarizer: this.summarizer,
          signal,
        });
        const records = this.memory.apply(built.changes, turn);
        if (records.length > 0) transcript.append(records);
        const manifestPath = await writeManifest(transcript.dir, built.manifest);
        this.lastRequest = {
          manifestPath,
          totalTokens: built.manifest.total_tokens,
          budgetTokens: built.manifest.budget_tokens,
          stablePrefixTokens: built.manifest.stable_prefix_tokens,
          cachedShare: undefined,
        };
        const result: BuiltStep = {
          request: built.request,
          manifest: {
            path: manifestPath,
            totalTokens: built.manifest.total_tokens,
            budgetTokens: built.manifest.budget_tokens,
            stablePrefixTokens: built.manifest.stable_prefix_tokens,
          },
        };
        manifestPaths.set(result, manifestPath);
        return result;
      },
      recordUsage: async (built, usage) => {
        this.sessionTokens += usage.input + usage.output;
        if (this.lastRequest) this.lastRequest.cachedShare = usage.input > 0 ? usage.cached / usage.input : 0;
        const path = manifestPaths.get(built);
        if (path) await recordUsage(path, usage);
      },
      shrinkContext: () => this.foldOldestBlock(turn, transcript),
      record: {
        assistant: (step, assistantText) => {
          transcript.append({ kind: "assistant", turn, step, text: assistantText, tokens: this.count(assistantText) });
        },
        toolCall: (step, call, outcome) => {
          const memory = toolMemory(call, outcome);
          summaries.set(call.callId, memory);
          transcript.append({
            kind: "tool_call",
            turn,
            step,
            call_id: call.callId,
            name: call.name,
            arguments: call.arguments,
            output: outcome.forModel,
            summary: memory.promptSummary,
            ...(outcome.raw !== outcome.forModel ? { raw: outcome.raw } : {}),
            is_error: outcome.isError,
            tokens: {
              call: this.count(call.name + call.arguments),
              output: this.count(outcome.forModel),
              summary: this.count(memory.promptSummary),
            },
          });
        },
      },
    };

    const outcome = await runTurnLoop(deps, turn, text, emit, signal);
    // The reason a turn failed stays with it, so `sessions show` and a later reader can tell why.
    if (outcome.error) transcript.append({ kind: "note", turn, what: `error:${outcome.error.kind}`, text: outcome.error.message });
    transcript.append({
      kind: "turn_end",
      turn,
      steps: outcome.steps,
      stop_reason: outcome.stopReason,
      ...(outcome.steps > 0 ? { usage: outcome.usage } : {}),
    });
    recordTurnInMemory(this.memory, outcome.turn, summaries, { ttlTurns: this.settings.workingSetTtlTurns });
    transcript.sync();
    this.flushNotices(emit);
    // The answer is out before the window folds: a fold may be a model call of its own, and the
    // user (or a script reading `chat -p`) should not wait for it to see the answer.
    emit({ type: "turn_end", turn, text: finalAnswer(outcome.turn), stopReason: outcome.stopReason });

    const folded = await this.slideWindow(transcript, signal, emit);
    // The cached part of the next request changes here anyway (a block settled or the window
    // folded), so the state snapshot it shows can catch up for free (ADR 0063).
    if (folded || this.memory.window.atBlockBoundary()) await takeStateSnapshot(this.state, this.memory, transcript, turn);
    const ws = this.memory.workingSetRecord(turn);
    if (ws) transcript.append(ws);
    transcript.sync();
    this.flushNotices(emit);
  }

  private async slideWindow(transcript: SessionTranscript, signal: AbortSignal, emit: (event: AgentEvent) => void): Promise<boolean> {
    // After an abort the model is not asked again: the offline summarizer folds instead.
    const summarizer = signal.aborted ? new ExtractiveSummarizer() : this.summarizer;
    const before = this.memory.window.size;
    let fold: Awaited<ReturnType<ShortTermMemory["slide"]>>;
    try {
      fold = await this.memory.slide(summarizer, signal.aborted ? undefined : signal);
    } catch (error) {
      // A fold never fails a turn (issue 10): whatever went wrong, the offline summarizer folds.
      if (signal.aborted) throw error;
      this.pendingNotices.push(`folding the window failed (${error instanceof Error ? error.message : String(error)}); folded with the offline summarizer instead`);
      fold = await this.memory.slide(new ExtractiveSummarizer());
    }
    if (fold?.kind !== "summary") return false;
    transcript.append(fold);
    emit({ type: "window_slid", foldedTurns: before - this.memory.window.size, summaryTokens: fold.tokens ?? this.count(fold.text) });
    return true;
  }

  /** After `context_length_exceeded`: fold the oldest window block into the summary. False if the window is empty. */
  private async foldOldestBlock(turn: number, transcript: SessionTranscript): Promise<boolean> {
    const block = this.memory.window.oldestBlock();
    const last = block.at(-1);
    if (!last) return false;
    const summary = await foldTurns(this.memory.summary, block, new ExtractiveSummarizer());
    transcript.append(this.memory.apply({ fold: { summary, throughTurn: last.turn, summarizer: "extractive" } }, turn));
    return true;
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
    const [stateRead, files] = await Promise.all([this.state.read(), readInstructionFiles(this.paths)]);
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

  setModel(model: string): void {
    this.settings.model = model;
  }

  async close(): Promise<void> {
    this.transcript?.close();
    const lock = this.lock;
    this.lock = undefined;
    const failed = await releaseSessionLock(lock);
    // Not fatal: a lock left behind names this (ended) pid, so the next writer takes it over.
    if (failed !== undefined) trace(`session ${this.sessionId}: could not release its lock: ${failed}`);
  }
}
