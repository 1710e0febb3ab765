/**
 * The working set (seed 004): token-bounded short-term items the agent keeps in view — file
 * snippets, notable tool results, notes — each with a source, a priority, tags and timestamps.
 * When an add overflows the budget, the overflow policy chooses what goes (see
 * working-set-policy.ts); every add, removal and eviction is an event the manifest records.
 *
 *   const ws = new WorkingSet({ budgetTokens: 4000, policy: "priority", countTokens });
 *   ws.setTurn(12); ws.setAttention(["src/parser.ts"]);
 *   ws.add({ content, source: "read_file", tags: ["src/parser.ts"], priority: 0.6 });
 *   const events = ws.drainEvents();       // → manifest memory_events
 *   transcript.append({ kind: "working_set", turn, items: ws.snapshot() });
 *
 * Add items between turns (at turn end) to keep the current turn's cached prefix intact.
 */
import type { WorkingSetItemData } from "../session/transcript-schema.ts";
import {
  condenseItems,
  effectivePriority,
  evictionOrder,
  type AttentionContext,
  type OverflowPolicy,
} from "./working-set-policy.ts";

export type WorkingSetItem = WorkingSetItemData;

export type WorkingSetEvent =
  | { type: "added"; id: string; source: string; tokens: number; priority: number; tags: string[]; total: number; budget: number }
  | { type: "removed"; id: string; source: string; tokens: number; total: number; budget: number }
  | {
      type: "evicted";
      id: string;
      source: string;
      tokens: number;
      priority: number;
      effective: number;
      policy: OverflowPolicy;
      total: number;
      budget: number;
    }
  | { type: "summarized"; id: string; from: string[]; tokens: number; total: number; budget: number }
  | { type: "rejected"; source: string; tokens: number; budget: number; reason: string }
  | { type: "cleared"; count: number; total: number; budget: number };

export interface NewWorkingSetItem {
  content: string;
  source: string;
  priority?: number;
  tags?: string[];
  /** Defaults to a content hash, so adding the same content twice keeps one item. */
  id?: string;
  /** Exact token count if the caller has it; otherwise `countTokens` is used. */
  tokens?: number;
}

export interface WorkingSetOptions {
  budgetTokens: number;
  policy: OverflowPolicy;
  /** Exact count (or a strict upper bound) of a text's tokens. */
  countTokens: (text: string) => number;
  now?: () => Date;
}

export function contentId(content: string): string {
  return `ws-${Bun.hash(content).toString(36).slice(0, 10)}`;
}

export class WorkingSet {
  private list: WorkingSetItem[] = [];
  private events: WorkingSetEvent[] = [];
  private listeners: Array<(event: WorkingSetEvent) => void> = [];
  private turn = 0;
  private attention: string[] = [];
  private budget: number;
  private summaries = 0;
  readonly policy: OverflowPolicy;
  private readonly count: (text: string) => number;
  private readonly now: () => Date;

  constructor(options: WorkingSetOptions) {
    this.budget = options.budgetTokens;
    this.policy = options.policy;
    this.count = options.countTokens;
    this.now = options.now ?? (() => new Date());
  }

  items(): readonly WorkingSetItem[] {
    return this.list;
  }

  get(id: string): WorkingSetItem | undefined {
    return this.list.find((item) => item.id === id);
  }

  used(): number {
    return this.list.reduce((n, item) => n + item.tokens, 0);
  }

  usage(): { used: number; budget: number; available: number } {
    const used = this.used();
    return { used, budget: this.budget, available: Math.max(0, this.budget - used) };
  }

  setTurn(turn: number): void {
    this.turn = turn;
  }

  /** The current task's files; items tagged with one of them get the attention boost. */
  setAttention(tags: readonly string[]): void {
    this.attention = tags.map((t) => t.toLowerCase());
  }

  attentionContext(): AttentionContext {
    return { turn: this.turn, attention: this.attention };
  }

  effectivePriority(item: WorkingSetItem): number {
    return effectivePriority(item, this.attentionContext());
  }

  on(listener: (event: WorkingSetEvent) => void): () => void {
    this.listeners.push(listener);
    return () => {
      this.listeners = this.listeners.filter((l) => l !== listener);
    };
  }

  /** Events since the last drain, oldest first. */
  drainEvents(): WorkingSetEvent[] {
    const out = this.events;
    this.events = [];
    return out;
  }

  private emit(event: WorkingSetEvent): void {
    this.events.push(event);
    for (const listener of this.listeners) listener(event);
  }

  /** Adds (or refreshes) an item, then applies the overflow policy. Returns the item, or undefined if it alone exceeds the budget. */
  add(input: NewWorkingSetItem): WorkingSetItem | undefined {
    const tokens = input.tokens ?? this.count(input.content);
    if (tokens > this.budget) {
      this.emit({ type: "rejected", source: input.source, tokens, budget: this.budget, reason: "larger than the working-set budget" });
      return undefined;
    }
    const id = input.id ?? contentId(input.content);
    const stamp = this.now().toISOString();
    const existing = this.get(id);
    if (existing) this.list = this.list.filter((item) => item !== existing);
    const item: WorkingSetItem = {
      id,
      content: input.content,
      source: input.source,
      priority: Math.min(1, Math.max(0, Math.max(input.priority ?? 0.5, existing?.priority ?? 0))),
      tags: input.tags ?? existing?.tags ?? [],
      tokens,
      added_turn: existing?.added_turn ?? this.turn,
      accessed_turn: this.turn,
      added_at: existing?.added_at ?? stamp,
      accessed_at: stamp,
    };
    this.list.push(item);
    this.emit({ type: "added", id, source: item.source, tokens, priority: item.priority, tags: item.tags, total: this.used(), budget: this.budget });
    this.enforceBudget(item.id);
    return this.get(id);
  }

  /** Marks an item used this turn (for LRU and decay) and returns it. */
  access(id: string): WorkingSetItem | undefined {
    const item = this.get(id);
    if (!item) return undefined;
    const touched = { ...item, accessed_turn: this.turn, accessed_at: this.now().toISOString() };
    this.list = this.list.map((x) => (x === item ? touched : x));
    return touched;
  }

  remove(id: string): boolean {
    const item = this.get(id);
    if (!item) return false;
    this.list = this.list.filter((x) => x !== item);
    this.emit({ type: "removed", id, source: item.source, tokens: item.tokens, total: this.used(), budget: this.budget });
    return true;
  }

  clear(): void {
    const count = this.list.length;
    this.list = [];
    this.emit({ type: "cleared", count, total: 0, budget: this.budget });
  }

  /** Changes the budget; evicts by policy if the items no longer fit. */
  setBudget(tokens: number): void {
    this.budget = tokens;
    this.enforceBudget(undefined);
  }

  /** Evicts one item (or, under SUMMARIZE, condenses a group) by policy. False when nothing can go. */
  evictOne(protectId?: string): boolean {
    const order = evictionOrder(this.list, this.policy, this.attentionContext()).filter((x) => x.id !== protectId);
    const victim = order[0];
    if (!victim) return false;
    if (this.policy === "summarize" && this.condense(order)) return true;
    this.list = this.list.filter((x) => x !== victim);
    this.emit({
      type: "evicted",
      id: victim.id,
      source: victim.source,
      tokens: victim.tokens,
      priority: victim.priority,
      effective: this.effectivePriority(victim),
      policy: this.policy,
      total: this.used(),
      budget: this.budget,
    });
    return true;
  }

  private enforceBudget(protectId: string | undefined): void {
    while (this.used() > this.budget && this.evictOne(protectId)) {
      // each pass removes or condenses at least one item
    }
  }

  /**
   * SUMMARIZE: replaces the oldest items with one condensed item, taking as few as needed to
   * fit the budget. Returns false when condensing cannot free room (then plain eviction runs).
   */
  private condense(order: readonly WorkingSetItem[]): boolean {
    const over = this.used() - this.budget;
    const victims: WorkingSetItem[] = [];
    for (const item of order) {
      victims.push(item);
      if (victims.length < 2) continue;
      const text = condenseItems(victims);
      const freed = victims.reduce((n, v) => n + v.tokens, 0) - this.count(text);
      if (freed >= over) break;
    }
    if (victims.length < 2) return false;
    const content = condenseItems(victims);
    const tokens = this.count(content);
    if (tokens >= victims.reduce((n, v) => n + v.tokens, 0)) return false;
    const gone = new Set(victims.map((v) => v.id));
    this.summaries += 1;
    const stamp = this.now().toISOString();
    const summary: WorkingSetItem = {
      id: `ws-summary-${this.turn}-${this.summaries}`,
      content,
      source: "summary",
      priority: Math.max(...victims.map((v) => v.priority)),
      tags: [...new Set(victims.flatMap((v) => v.tags))],
      tokens,
      added_turn: this.turn,
      accessed_turn: this.turn,
      added_at: stamp,
      accessed_at: stamp,
    };
    this.list = [summary, ...this.list.filter((x) => !gone.has(x.id))];
    this.emit({ type: "summarized", id: summary.id, from: [...gone], tokens, total: this.used(), budget: this.budget });
    return true;
  }

  snapshot(): WorkingSetItem[] {
    return this.list.map((item) => ({ ...item, tags: [...item.tags] }));
  }

  /** Replaces the items with a snapshot (no events: restoring is not a change). */
  restore(items: readonly WorkingSetItem[]): void {
    this.list = items.map((item) => ({ ...item, tags: [...item.tags] }));
  }
}
