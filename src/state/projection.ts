/**
 * The prompt projection of the working state: only what helps the next decision. Done tasks,
 * `schema_version`, `updated_at` and full timestamps are left out; dates are short (YYYY-MM-DD).
 * When the projection exceeds its cap (750 tokens by default, seed 001's quality rule), the least
 * useful go first and `omitted` lists them. Ranking, most useful first: blockers, tasks in progress
 * or blocked (recent first), the 3 most recent decisions, conventions, open tasks (recent first),
 * older decisions (recent first). The decisions' `why` goes before any item does. Goal and `now`
 * always stay (cut at 600 characters, or 30% of the cap in tokens each, whichever is less).
 * Pure and synchronous: tokens are counted exactly by the supplied counter, by default the o200k
 * tokenizer of src/tokens/tokenizer.ts, which the caller loads first (encodeStateToon does).
 */
import { encode } from "@toon-format/toon";
import { ValarmindError } from "../errors.ts";
import { countTokensIfReady } from "../tokens/tokenizer.ts";
import type { Blocker, Decision, Task, WorkingState } from "./schema.ts";

export const STATE_TOKEN_CAP = 750;
export const STATE_TOKEN_FLOOR = 250;
/** Goal and now longer than this are cut (and reported) so they cannot crowd out everything else. */
const TEXT_FIELD_MAX_CHARS = 600;
/** …and each to at most this share of the cap in tokens. */
const TEXT_FIELD_MAX_SHARE = 0.3;
/** The most recent decisions rank before conventions and open tasks. */
const PINNED_DECISIONS = 3;

export interface ProjectedTask {
  id: string;
  title: string;
  status: string;
  note?: string;
}
export interface ProjectedDecision {
  id: string;
  title: string;
  date: string;
  why?: string;
}
export interface ProjectedBlocker {
  id: string;
  text: string;
  task?: string;
}

export interface StateProjection {
  goal: string;
  now: string;
  decisions_recent: ProjectedDecision[];
  tasks_open: ProjectedTask[];
  blockers: ProjectedBlocker[];
  conventions: Record<string, string>;
}

export interface ProjectionResult {
  projection: StateProjection;
  /** Ids (`T-3`, `ADR-0002`, `B-1`), `conventions.<name>`, `decisions_recent.why`, `goal (cut)`... left out to fit. */
  omitted: string[];
  /** Tokens of the rendered projection, as measured by the supplied counter. */
  tokens: number;
}

export interface ProjectionOptions {
  maxTokens?: number;
  /** Exact token count of a string; default: the o200k tokenizer, which must be loaded (`await loadTokenizer()`). */
  countTokens?: (text: string) => number;
  /** How the projection becomes prompt text; default: TOON. */
  render?: (projection: StateProjection) => string;
}

export function renderToon(projection: StateProjection): string {
  return encode(projection);
}

function loadedTokenizerCount(text: string): number {
  const n = countTokensIfReady(text);
  if (n === undefined) {
    throw new ValarmindError("projectState needs the tokenizer: await loadTokenizer() (src/tokens/tokenizer.ts) first, or pass countTokens");
  }
  return n;
}

type Unit =
  | { kind: "task"; item: Task }
  | { kind: "decision"; item: Decision }
  | { kind: "blocker"; item: Blocker }
  | { kind: "convention"; key: string; value: string };

function unitId(unit: Unit): string {
  return unit.kind === "convention" ? `conventions.${unit.key}` : unit.item.id;
}

function byRecent<T>(items: readonly T[], stamp: (item: T) => string): T[] {
  // Stable: equal stamps keep the later item (higher id) first.
  return items
    .map((item, index) => ({ item, index }))
    .sort((a, b) => stamp(b.item).localeCompare(stamp(a.item)) || b.index - a.index)
    .map((e) => e.item);
}

/** Every projectable item, most useful first. Goal and now are not units: they always stay. */
function rankUnits(state: WorkingState): Unit[] {
  const live = state.tasks_open.filter((t) => t.status !== "done");
  const active = byRecent(live.filter((t) => t.status !== "open"), (t) => t.updated_at);
  const open = byRecent(live.filter((t) => t.status === "open"), (t) => t.updated_at);
  const decisions = byRecent(state.decisions_recent, (d) => d.ts);
  return [
    ...state.blockers.map((item): Unit => ({ kind: "blocker", item })),
    ...active.map((item): Unit => ({ kind: "task", item })),
    ...decisions.slice(0, PINNED_DECISIONS).map((item): Unit => ({ kind: "decision", item })),
    ...Object.entries(state.conventions).map(([key, value]): Unit => ({ kind: "convention", key, value })),
    ...open.map((item): Unit => ({ kind: "task", item })),
    ...decisions.slice(PINNED_DECISIONS).map((item): Unit => ({ kind: "decision", item })),
  ];
}

/** `text` cut to at most `units` UTF-16 units, never between the two halves of a surrogate pair (an emoji). */
function sliceWhole(text: string, units: number): string {
  const end = Math.max(0, units);
  const last = text.charCodeAt(end - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? end - 1 : end);
}

/**
 * Goal or `now` cut to TEXT_FIELD_MAX_CHARS characters and `maxTokens` tokens, whichever is less
 * (600 characters of Japanese or of hashes are far more tokens than of English), with "…".
 */
function cut(text: string, maxTokens: number, countTokens: (text: string) => number): { text: string; cut: boolean } {
  let out = text.length > TEXT_FIELD_MAX_CHARS ? sliceWhole(text, TEXT_FIELD_MAX_CHARS) : text;
  for (let tokens = countTokens(out); tokens > maxTokens && out !== ""; tokens = countTokens(`${out}…`)) {
    out = sliceWhole(out, Math.min(out.length - 1, Math.floor((out.length * maxTokens) / tokens)));
  }
  return out === text ? { text, cut: false } : { text: `${out}…`, cut: true };
}

function numericId(id: string): number {
  return Number(id.slice(id.indexOf("-") + 1));
}

function assemble(state: WorkingState, goal: string, now: string, kept: ReadonlySet<string>, withWhy: boolean): StateProjection {
  // Kept items appear in id order, so adding an item never reorders the others (cache-friendly).
  const inOrder = <T extends { id: string }>(items: readonly T[]) =>
    items.filter((i) => kept.has(i.id)).sort((a, b) => numericId(a.id) - numericId(b.id));
  const tasks = inOrder(state.tasks_open.filter((t) => t.status !== "done"));
  const blockers = inOrder(state.blockers);
  // A blocked task's note usually repeats its blocker's text: say it once (seed 001: no content twice).
  const noteOf = (t: Task) => (t.note !== undefined && blockers.some((b) => b.task === t.id && b.text === t.note) ? undefined : t.note);
  const withNote = tasks.some((t) => noteOf(t) !== undefined);
  const withTask = blockers.some((b) => b.task !== undefined);
  // Rows of one array share their keys so TOON can use its compact tabular form.
  return {
    goal,
    now,
    decisions_recent: inOrder(state.decisions_recent).map((d) => ({
      id: d.id,
      title: d.title,
      date: d.ts.slice(0, 10),
      ...(withWhy ? { why: d.why } : {}),
    })),
    tasks_open: tasks.map((t) => ({ id: t.id, title: t.title, status: t.status, ...(withNote ? { note: noteOf(t) ?? "" } : {}) })),
    blockers: blockers.map((b) => ({ id: b.id, text: b.text, ...(withTask ? { task: b.task ?? "" } : {}) })),
    conventions: Object.fromEntries(Object.entries(state.conventions).filter(([key]) => kept.has(`conventions.${key}`))),
  };
}

export function projectState(state: WorkingState, options: ProjectionOptions = {}): ProjectionResult {
  const cap = options.maxTokens ?? STATE_TOKEN_CAP;
  const countTokens = options.countTokens ?? loadedTokenizerCount;
  const render = options.render ?? renderToon;
  const fieldTokens = Math.floor(cap * TEXT_FIELD_MAX_SHARE);
  const goal = cut(state.goal, fieldTokens, countTokens);
  const now = cut(state.now, fieldTokens, countTokens);
  const fixedOmitted = [...(goal.cut ? ["goal (cut)"] : []), ...(now.cut ? ["now (cut)"] : [])];
  const units = rankUnits(state);
  const ids = units.map(unitId);
  const measure = (keep: number, withWhy: boolean) => {
    const projection = assemble(state, goal.text, now.text, new Set(ids.slice(0, keep)), withWhy);
    return { projection, tokens: countTokens(render(projection)) };
  };

  const full = measure(units.length, true);
  if (full.tokens <= cap) return { ...full, omitted: fixedOmitted };
  const hasWhy = state.decisions_recent.some((d) => d.why !== "");
  const noWhy = measure(units.length, false);
  const whyOmitted = hasWhy ? ["decisions_recent.why"] : [];
  if (noWhy.tokens <= cap) return { ...noWhy, omitted: [...fixedOmitted, ...whyOmitted] };

  // Largest prefix of the ranking that fits: tokens grow with every unit kept, so bisect.
  let lo = 0;
  let hi = units.length;
  let best = measure(0, false);
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    const candidate = measure(mid, false);
    if (candidate.tokens <= cap) {
      lo = mid;
      best = candidate;
    } else {
      hi = mid - 1;
    }
  }
  return { ...best, omitted: [...fixedOmitted, ...whyOmitted, ...ids.slice(lo)] };
}
