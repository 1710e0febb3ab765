/**
 * Short-term memory of one session: the conversation window, the rolling summary, the working
 * set and the touched files/symbols. Rebuilt from the transcript on resume; the agent feeds it
 * as turns end and persists what it returns.
 *
 *   const memory = ShortTermMemory.fromRecords(read.records, { ...settings, countTokens });
 *   // each model call: buildRequest({ memory: memory.view(), ... }) → built
 *   session.append(memory.apply(built.changes));            // budget folds / evictions, if any
 *   // turn end:
 *   memory.endTurn(turn);                                   // window + touched files
 *   const fold = await memory.slide(summarizer, signal);    // window over SHORT_BUFFER_TURNS?
 *   if (fold) session.append(fold);
 *   const ws = memory.workingSetRecord(turn.turn); if (ws) session.append(ws);
 */
import type { FileRewind } from "../checkpoints/undo-note.ts";
import type { NewRecord, ToolCallRecord, TranscriptRecord } from "../session/transcript-schema.ts";
import { factsOfRecordedCall } from "../tools/call-facts.ts";
import type { ToolLocation } from "../tools/types.ts";
import type { FoldDecision } from "./fold-economics.ts";
import { INLINE_OUTPUT_BYTES } from "./tool-memory.ts";
import { foldTurns, type RollingSummary, type Summarizer } from "./summary.ts";
import { TouchedEntities, type TouchedEntity } from "./touched.ts";
import type { ToolExchange, Turn } from "./turn.ts";
import { ConversationWindow } from "./window.ts";
import { WorkingSet, type NewWorkingSetItem, type WorkingSetEvent, type WorkingSetItem } from "./working-set.ts";
import type { OverflowPolicy } from "./working-set-policy.ts";

/** A tool record as a turn item: in the window its prompt summary, in a pending turn its output. */
function toolItem(record: ToolCallRecord, form: "summary" | "output"): ToolExchange {
  return {
    kind: "tool",
    callId: record.call_id,
    name: record.name,
    arguments: record.arguments,
    output: form === "summary" ? record.summary : record.output,
    isError: record.is_error,
  };
}

/** A recorded call's long output that stayed whole in the window (tool-memory.ts): the working-set item it becomes when its turn folds. */
function heldBackItem(record: ToolCallRecord): NewWorkingSetItem | undefined {
  if (record.is_error || record.summary !== record.output || Buffer.byteLength(record.output, "utf8") <= INLINE_OUTPUT_BYTES) return undefined;
  const facts = factsOfRecordedCall(record.name, record.arguments);
  if (facts?.workingSetPriority === undefined) return undefined;
  const tags = facts.locations.map((l) => l.path);
  return { content: record.output, source: `${record.name} ${tags[0] ?? ""}`.trim(), priority: facts.workingSetPriority, tags };
}

export type MemoryEvent =
  | WorkingSetEvent
  | { type: "window_folded"; fromTurn: number; throughTurn: number; reason: "window_full" | "budget" | "cost"; summarizer: string };

export interface ShortTermOptions {
  shortBufferTurns: number;
  windowBlockTurns: number;
  workingSetTokens: number;
  overflowPolicy: OverflowPolicy;
  /** Exact count, or a strict upper bound, for working-set items added without a count. */
  countTokens: (text: string) => number;
  /** The workspace root: files named by absolute path are matched by their relative one. */
  root?: string;
}

/** What the prompt builder reads (never mutates). */
export interface MemoryView {
  summary: RollingSummary | undefined;
  turns: readonly Turn[];
  workingSet: readonly WorkingSetItem[];
  overflowPolicy: OverflowPolicy;
  touchedFiles: readonly TouchedEntity[];
  touchedSymbols: readonly TouchedEntity[];
  /** Memory events since the last build, for the manifest. */
  events: readonly MemoryEvent[];
}

/** What a build changed to fit the budget; `ShortTermMemory.apply` makes it real. */
export interface MemoryChanges {
  /** The window's oldest turns through `throughTurn` were folded into `summary`. */
  fold?: { summary: RollingSummary; throughTurn: number; summarizer: string };
  /** The working set after budget evictions (or condensing), when it changed. */
  workingSet?: { items: WorkingSetItem[]; events: WorkingSetEvent[] };
}

export class ShortTermMemory {
  readonly window: ConversationWindow;
  readonly workingSet: WorkingSet;
  readonly touched: TouchedEntities;
  summary: RollingSummary | undefined;
  /** The working state as the cached part of the prompt shows it (a `state_snapshot` record's). */
  stateSnapshot: { turn: number; state: unknown } | undefined;
  /**
   * The working state as the window's turns last showed it: set when a turn's state changes are
   * taken (they are a delta from it), cleared at a fold or a new snapshot — a fold may take the
   * turns that showed earlier changes, so the next turn's changes count from the snapshot again.
   */
  stateSeen: { turn: number; state: unknown } | undefined;
  /** The highest turn number seen. */
  lastTurn = 0;
  /** A turn whose user message reached the transcript but which never ended; the agent may retry it. */
  pending: Turn | undefined;
  private events: MemoryEvent[] = [];
  private workingSetDirty = false;
  /** Working-set items of window turns whose outputs are still whole in the window: added when their turn folds. */
  private heldBack = new Map<number, NewWorkingSetItem[]>();
  /** Files written since the last fold: their working-set items leave at the next one. */
  private readonly stalePaths = new Set<string>();
  /** Turns a working-set item stays without being used (settings.workingSetTtlTurns), checked at folds. */
  workingSetTtlTurns = 3;
  /** Undos and redos since the last user message: the next message tells the model (undo-note.ts). */
  private rewinds: FileRewind[] = [];

  constructor(options: ShortTermOptions) {
    this.touched = new TouchedEntities(options.root);
    this.window = new ConversationWindow(options);
    this.workingSet = new WorkingSet({
      budgetTokens: options.workingSetTokens,
      policy: options.overflowPolicy,
      countTokens: options.countTokens,
    });
    this.workingSet.on((event) => {
      this.events.push(event);
      this.workingSetDirty = true;
    });
  }

  /** Rebuilds the memory from transcript records (the header excluded), without summarizing anything. */
  static fromRecords(records: readonly TranscriptRecord[], options: ShortTermOptions): ShortTermMemory {
    const memory = new ShortTermMemory(options);
    // The open turn keeps its records: the window carries tool summaries, a pending turn its outputs.
    let open: { turn: Turn; calls: Map<string, ToolCallRecord>; reasoning?: { step: number; text: string } } | undefined;
    const close = (stopReason: Turn["stopReason"]) => {
      if (!open) return;
      const { turn, calls } = open;
      turn.stopReason ??= stopReason;
      turn.items = turn.items.map((item) => {
        const call = item.kind === "tool" ? calls.get(item.callId) : undefined;
        return call ? { ...toolItem(call, "summary"), ...(item.kind === "tool" && item.reasoning !== undefined && { reasoning: item.reasoning }) } : item;
      });
      memory.endTurn(turn);
      for (const call of calls.values()) {
        const item = heldBackItem(call);
        if (item) memory.holdBack(turn.turn, item);
      }
      open = undefined;
    };
    for (const record of records) {
      switch (record.kind) {
        case "user":
          close("error");
          memory.rewinds = [];
          open = { turn: { turn: record.turn, user: record.text, items: [] }, calls: new Map() };
          memory.lastTurn = Math.max(memory.lastTurn, record.turn);
          break;
        case "assistant":
          if (open?.turn.turn === record.turn) open.turn.items.push({ kind: "assistant", text: record.text });
          break;
        case "reasoning":
          if (open?.turn.turn === record.turn) open.reasoning = { step: record.step, text: record.text };
          break;
        case "tool_call":
          if (open?.turn.turn === record.turn) {
            // The step's reasoning goes with its first call, as the turn loop keeps it.
            const reasoning = open.reasoning?.step === record.step ? open.reasoning.text : undefined;
            open.reasoning = undefined;
            open.turn.items.push({ ...toolItem(record, "output"), ...(reasoning !== undefined && { reasoning }) });
            open.calls.set(record.call_id, record);
          }
          break;
        case "turn_end":
          if (open?.turn.turn === record.turn) {
            if (record.usage) open.turn.usage = record.usage;
            close(record.stop_reason);
          }
          break;
        case "summary":
          memory.stateSeen = undefined;
          memory.summary = { text: record.text, fromTurn: record.from_turn, throughTurn: record.through_turn, ...(record.tokens !== undefined && { tokens: record.tokens }) };
          // What those turns held back went to the working set then: its next record says so.
          for (const turn of memory.window.dropThrough(record.through_turn)) memory.heldBack.delete(turn.turn);
          break;
        case "working_set":
          memory.workingSet.restore(record.items);
          break;
        case "state_snapshot":
          memory.stateSnapshot = { turn: record.turn, state: record.state };
          memory.stateSeen = undefined;
          break;
        case "turn_context":
          if (open?.turn.turn === record.turn) {
            open.turn.context = { stateChanges: record.state_changes, context: record.context, shown: record.shown };
            if (record.state) memory.stateSeen = { turn: record.turn, state: record.state };
          }
          break;
        case "undo":
        case "redo":
          // Undo and redo rewrote these files: reads of them held in memory are stale (ADR 0081).
          memory.noteRewind({ kind: record.kind, of_turn: record.of_turn, files: record.files });
          break;
        case "session":
        case "note":
          break;
      }
    }
    memory.pending = open?.turn;
    memory.events = [];
    memory.workingSetDirty = false;
    return memory;
  }

  /** A finished turn enters the window; its files and symbols count as touched. */
  /** `locationsOf`: what a call that ran in this process touched (its confined, workspace-relative paths); else read from its arguments. */
  endTurn(turn: Turn, locationsOf?: (callId: string) => readonly ToolLocation[] | undefined): void {
    this.window.push(turn);
    this.lastTurn = Math.max(this.lastTurn, turn.turn);
    if (this.pending?.turn === turn.turn) this.pending = undefined;
    this.touched.observeText(turn.user, turn.turn);
    for (const item of turn.items) {
      if (item.kind !== "tool") continue;
      const live = locationsOf?.(item.callId);
      if (live) this.touched.observeLocations(live, turn.turn);
      else this.touched.observeToolCall(item.name, item.arguments, turn.turn);
    }
  }

  /**
   * Folds the oldest window turns into the summary when `decide` says so (fold-economics.ts: when
   * it pays, or the window is full); without `decide`, once finished turns reach
   * SHORT_BUFFER_TURNS, the window's older half (whole blocks).
   */
  async slide(summarizer: Summarizer, signal?: AbortSignal, decide?: (turns: readonly Turn[], summary: RollingSummary | undefined) => FoldDecision): Promise<NewRecord | undefined> {
    const decision = decide?.(this.window.turns, this.summary);
    const block = decision ? this.window.turns.slice(0, decision.fold) : this.window.overflowBlock();
    const last = block.at(-1);
    if (!last) return undefined;
    const summary = await foldTurns(this.summary, block, summarizer, signal);
    return this.applyFold({ summary, throughTurn: last.turn, summarizer: summarizer.name }, decision?.reason === "cost" ? "cost" : decision?.reason === "budget" ? "budget" : "window_full");
  }

  /** A turn's per-turn part was taken (its first request): its state changes, if any, are now what the model has seen. */
  noteTurnContext(turn: number, state: unknown): void {
    if (state !== undefined) this.stateSeen = { turn, state };
  }

  /** Holds a long output of `turn` back from the working set while it is whole in the window. */
  holdBack(turn: number, item: NewWorkingSetItem): void {
    this.heldBack.set(turn, [...(this.heldBack.get(turn) ?? []), item]);
  }

  /** An undo or redo rewrote `files`: what memory holds of them is stale, and the next message says so. */
  noteRewind(rewind: FileRewind): void {
    this.markStale(rewind.files);
    this.rewinds.push(rewind);
  }

  /** The undos and redos the next user message must tell the model about; told once. */
  takeRewinds(): FileRewind[] {
    return this.rewinds.splice(0);
  }

  /** Files a call wrote: their held-back items go now, their working-set items at the next fold. */
  markStale(paths: readonly string[]): void {
    for (const [turn, items] of this.heldBack) this.heldBack.set(turn, items.filter((item) => !(item.tags ?? []).some((tag) => paths.includes(tag))));
    for (const path of paths) this.stalePaths.add(path);
  }

  /** At a fold: stale items and items unused for `workingSetTtlTurns` turns leave the working set. */
  private tidyWorkingSet(): void {
    const oldest = this.lastTurn - this.workingSetTtlTurns;
    for (const item of this.workingSet.items()) {
      const stale = item.tags.some((tag) => this.stalePaths.has(tag));
      if (stale || Math.max(item.added_turn, item.accessed_turn) <= oldest) this.workingSet.remove(item.id);
    }
    this.stalePaths.clear();
  }

  private applyFold(fold: NonNullable<MemoryChanges["fold"]>, reason: "window_full" | "budget" | "cost"): NewRecord {
    const from = this.window.span()?.first ?? fold.throughTurn;
    // The working set changes only here, where the prefix breaks anyway: stale and expired items
    // go; the folded turns' long outputs leave the window and stay in view in the working set.
    this.tidyWorkingSet();
    for (const turn of this.window.dropThrough(fold.throughTurn)) {
      for (const item of this.heldBack.get(turn.turn) ?? []) this.workingSet.add(item);
      this.heldBack.delete(turn.turn);
    }
    this.summary = fold.summary;
    this.stateSeen = undefined;
    this.events.push({ type: "window_folded", fromTurn: from, throughTurn: fold.throughTurn, reason, summarizer: fold.summarizer });
    return {
      kind: "summary",
      from_turn: fold.summary.fromTurn,
      through_turn: fold.throughTurn,
      text: fold.summary.text,
      ...(fold.summary.tokens !== undefined && { tokens: fold.summary.tokens }),
      summarizer: fold.summarizer,
      reason,
    };
  }

  /** Applies a build's budget changes; returns the transcript records that persist them. */
  apply(changes: MemoryChanges, turn: number): NewRecord[] {
    const records: NewRecord[] = [];
    if (changes.fold) records.push(this.applyFold(changes.fold, "budget"));
    if (changes.workingSet) {
      this.workingSet.restore(changes.workingSet.items);
      this.events.push(...changes.workingSet.events);
      records.push({ kind: "working_set", turn, items: this.workingSet.snapshot() });
      this.workingSetDirty = false;
    }
    return records;
  }

  /** A snapshot record when the working set changed since the last one, else undefined. */
  workingSetRecord(turn: number): NewRecord | undefined {
    if (!this.workingSetDirty) return undefined;
    this.workingSetDirty = false;
    return { kind: "working_set", turn, items: this.workingSet.snapshot() };
  }

  /** The builder's input. Takes (drains) the memory events since the last view. */
  view(): MemoryView {
    const events = this.events;
    this.events = [];
    return { ...this.peek(), events };
  }

  /** The builder's input without taking the pending events (previews: they stay for the next real build). */
  peek(): MemoryView {
    return {
      summary: this.summary,
      turns: this.window.turns,
      workingSet: this.workingSet.items(),
      overflowPolicy: this.workingSet.policy,
      touchedFiles: this.touched.list("file", 40),
      touchedSymbols: this.touched.list("symbol", 40),
      events: [],
    };
  }
}
