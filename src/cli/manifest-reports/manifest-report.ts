/**
 * The human report of one manifest: header, budget bar, a table of what went in (grouped: tool
 * definitions, window turns, working-set items and this turn's steps collapse into one row each
 * unless `all`), then what the cutoff did, what was left out, and notes.
 */
import type { Manifest, ManifestItem, ManifestPrefix } from "../../prompt/manifest-schema.ts";
import { formatInt, padEnd, padStart, percent, type Paint } from "./text-style.ts";

export interface ReportOptions {
  paint: Paint;
  /** First line, e.g. "dry run (nothing sent)" or the manifest's path. */
  title: string;
  all?: boolean;
  notes?: string[];
}

interface Row {
  region: string;
  label: string;
  tokens: number;
  stable: boolean;
  why: string;
}

const SINGLE_LABEL: Record<string, string> = {
  core_rules: "core rules",
  user_instructions: "your AGENTS.md",
  project_instructions: "VALARMIND.md",
  personal_preferences: "VALARMIND.local.md",
  working_state: "working state (TOON)",
  volatile_context: "time · git · touched files",
  current_task: "the user's message",
  instructions: "request rules",
  evicted_turns: "turns to fold",
};

const GROUPED = new Set(["tool", "turn", "working_set_item", "task_step"]);

function range(items: readonly ManifestItem[]): string {
  const nums = items.map((i) => Number(i.id.split(":")[1])).filter((n) => Number.isFinite(n));
  if (nums.length === 0) return "";
  const lo = Math.min(...nums);
  const hi = Math.max(...nums);
  return lo === hi ? ` (turn ${lo})` : ` (turns ${lo}–${hi})`;
}

function groupLabel(type: string, items: readonly ManifestItem[]): { label: string; why: string } {
  const n = items.length;
  switch (type) {
    case "tool":
      return { label: `${n} tool definition${n === 1 ? "" : "s"}`, why: "tools the model may call this turn" };
    case "turn":
      return {
        label: `${n} turn${n === 1 ? "" : "s"}${range(items)}`,
        why: "the window: each turn as it entered (long reads whole, other tool results as summaries, long answers as their gist), unchanged until it folds",
      };
    case "working_set_item": {
      const sources = [...new Set(items.map((i) => /source (\S+),/.exec(i.detail ?? "")?.[1]).filter(Boolean))];
      const boosted = items.filter((i) => i.detail?.includes("boosted")).length;
      return {
        label: `${n} working-set item${n === 1 ? "" : "s"}`,
        why: `kept in view${sources.length ? ` (${sources.join(", ")})` : ""}${boosted ? `; ${boosted} boosted for the current task` : ""}`,
      };
    }
    case "task_step":
      return { label: `${n} step${n === 1 ? "" : "s"} of this turn`, why: "tool calls and outputs so far this turn" };
    default:
      return { label: `${n} ${type}`, why: "" };
  }
}

function singleLabel(item: ManifestItem): string {
  if (item.type === "summary") {
    const turns = /turns (\d+–\d+)/.exec(item.detail ?? "")?.[1];
    return `rolling summary${turns ? ` (turns ${turns})` : ""}`;
  }
  if (item.type === "tool") return item.id;
  // "agents:src/AGENTS.md" → the path; "attachment:src/a.ts" → "@src/a.ts".
  if (item.type === "agents_instructions") return item.id.slice("agents:".length);
  if (item.type === "attachment") return `@${item.id.slice("attachment:".length).replace(/:image$/, " (image)")}`;
  if (item.type === "turn") return item.id.replace(":", " ");
  if (item.type === "working_set_item") return item.id;
  return SINGLE_LABEL[item.type] ?? item.id;
}

export function rowsOf(items: readonly ManifestItem[], all: boolean): Row[] {
  const rows: Row[] = [];
  for (let i = 0; i < items.length; ) {
    const item = items[i];
    if (!item) break;
    if (!all && GROUPED.has(item.type)) {
      let j = i;
      while (items[j]?.type === item.type && items[j]?.region === item.region) j++;
      const group = items.slice(i, j);
      const { label, why } = groupLabel(item.type, group);
      rows.push({ region: item.region, label, tokens: group.reduce((n, x) => n + x.tokens, 0), stable: group.every((x) => x.stable), why });
      i = j;
      continue;
    }
    rows.push({ region: item.region, label: singleLabel(item), tokens: item.tokens, stable: item.stable, why: item.detail ?? item.reason });
    i++;
  }
  return rows;
}

export function budgetBar(total: number, budget: number, stable: number, paint: Paint, width = 32): string {
  const scale = Math.max(total, budget);
  const cells = (n: number) => Math.round((n / scale) * width);
  const used = cells(total);
  const stableCells = Math.min(cells(stable), used);
  const free = Math.max(0, cells(budget) - used);
  const tone = total > budget ? "red" : total > budget * 0.85 ? "yellow" : "green";
  const bar = paint(tone, "█".repeat(stableCells) + "▓".repeat(used - stableCells)) + paint("dim", "░".repeat(free));
  return `[${bar}${" ".repeat(Math.max(0, width - used - free))}]`;
}

/** Dropped entries grouped by reason: one line per reason with a count, tokens and the first ids. */
function droppedGroups(dropped: Manifest["dropped"]): Array<{ reason: string; count: number; tokens: number; ids: string[]; detail: string }> {
  const groups = new Map<string, { reason: string; count: number; tokens: number; ids: string[]; detail: string }>();
  for (const d of dropped) {
    const g = groups.get(d.reason) ?? { reason: d.reason, count: 0, tokens: 0, ids: [], detail: d.detail ?? "" };
    g.count += 1;
    g.tokens += d.tokens;
    g.ids.push(d.id);
    groups.set(d.reason, g);
  }
  return [...groups.values()];
}

function countsOf(types: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const t of types) counts.set(t, (counts.get(t) ?? 0) + 1);
  return [...counts].map(([t, n]) => (n === 1 ? t : `${n} ${t}`)).join(", ");
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** "prefix  break at summary (the rolling summary changed…) · predicted cached 4,096 · API cached 4,224". */
function prefixLine(p: ManifestPrefix, usage: Manifest["usage"]): string {
  const what = p.kind === "first" ? "first request (nothing to compare with)" : p.kind === "append" ? `appends to ${p.compared_with}` : `breaks ${p.compared_with} at ${p.first_changed?.id ?? "?"}: ${p.first_changed?.reason ?? ""}`;
  const actual = usage ? ` · API cached ${formatInt(usage.cached)}` : "";
  return `prefix  ${what} · reused ${formatInt(p.reused_tokens)} · predicted cached ${formatInt(p.predicted_cached_tokens)}${actual}`;
}

export function formatManifestReport(m: Manifest, options: ReportOptions): string {
  const { paint } = options;
  const out: string[] = [];
  out.push(`${paint("bold", "valarmind prompt")} · ${options.title}`);
  out.push(paint("dim", `session ${m.session} · turn ${m.turn} · step ${m.step} · ${m.purpose} · ${m.model} · ${m.timestamp}`));
  out.push("");
  const over = m.total_tokens > m.budget_tokens;
  const used = `${formatInt(m.total_tokens)} / ${formatInt(m.budget_tokens)} tokens (${percent(m.total_tokens, m.budget_tokens)})`;
  out.push(`budget  ${budgetBar(m.total_tokens, m.budget_tokens, m.stable_prefix_tokens, paint)}  ${over ? paint("red", used) : used}`);
  out.push(paint("dim", `        █ stable prefix ${formatInt(m.stable_prefix_tokens)} (${percent(m.stable_prefix_tokens, m.total_tokens)}) · ▓ volatile · ░ free · cache key ${m.prompt_cache_key}`));
  if (m.usage) {
    const u = m.usage;
    out.push(`usage   input ${formatInt(u.input)} (cached ${formatInt(u.cached)}, ${percent(u.cached, u.input)}) · output ${formatInt(u.output)} (reasoning ${formatInt(u.reasoning)}) · local estimate ${formatInt(m.total_tokens)}`);
  }
  if (m.prefix) out.push(prefixLine(m.prefix, m.usage));
  if (m.api_input_tokens !== undefined) {
    const delta = m.api_input_tokens - m.total_tokens;
    out.push(`api     input_tokens ${formatInt(m.api_input_tokens)} (local ${formatInt(m.total_tokens)}, ${delta >= 0 ? "+" : ""}${formatInt(delta)})`);
  }
  out.push("");

  const rows = rowsOf(m.items, options.all === true);
  const regionW = Math.max(6, ...rows.map((r) => r.region.length));
  const labelW = Math.min(40, Math.max(4, ...rows.map((r) => r.label.length)));
  const header = `  ${padEnd("region", regionW)}  ${padEnd("item", labelW)}  ${padStart("tokens", 7)}  ${padStart("share", 6)}  ${padEnd("cache", 8)}  why`;
  out.push(paint("dim", header));
  for (const r of rows) {
    const cache = r.stable ? paint("dim", "stable") : paint("yellow", "volatile");
    out.push(
      `  ${padEnd(paint("cyan", r.region), regionW)}  ${padEnd(clip(r.label, labelW), labelW)}  ${padStart(formatInt(r.tokens), 7)}  ${padStart(percent(r.tokens, m.total_tokens, 1), 6)}  ${padEnd(cache, 8)}  ${paint("dim", clip(r.why, 72))}`,
    );
  }
  const pad = " ".repeat(regionW + 4);
  out.push(`${pad}${padEnd("framing (role markers)", labelW)}  ${padStart(formatInt(m.framing_tokens), 7)}  ${padStart(percent(m.framing_tokens, m.total_tokens, 1), 6)}`);
  out.push(`${pad}${padEnd(paint("bold", "total"), labelW)}  ${padStart(paint("bold", formatInt(m.total_tokens)), 7)}`);
  out.push("");

  if (m.cutoff_steps.length === 0) {
    out.push(`${paint("bold", "cut to fit:")} nothing (within budget)`);
  } else {
    out.push(paint("bold", `cut to fit the budget of ${formatInt(m.budget_tokens)}:`));
    for (const s of m.cutoff_steps) {
      out.push(`  ${paint("yellow", "✂")} ${padEnd(s.step, 21)} ${s.detail}  ${paint("dim", `${formatInt(s.tokens_before)} → ${formatInt(s.tokens_after)}`)}`);
    }
  }
  if (m.dropped.length === 0) {
    out.push(`${paint("bold", "left out:")} nothing`);
  } else if (options.all) {
    out.push(paint("bold", `left out (${m.dropped.length}):`));
    for (const d of m.dropped) {
      out.push(`  - ${padEnd(d.id, 24)} ${padStart(d.tokens > 0 ? formatInt(d.tokens) : "", 6)}  ${d.reason}${d.detail ? paint("dim", `: ${clip(d.detail, 90)}`) : ""}`);
    }
  } else {
    out.push(paint("bold", `left out (${m.dropped.length}):`));
    for (const g of droppedGroups(m.dropped)) {
      const ids = g.ids.slice(0, 4).join(", ") + (g.ids.length > 4 ? `, … (${g.ids.length - 4} more)` : "");
      const tokens = g.tokens > 0 ? ` ${formatInt(g.tokens)} tokens` : "";
      out.push(`  - ${g.reason} ×${g.count}${tokens}: ${ids}${g.detail ? paint("dim", ` — ${clip(g.detail, 80)}`) : ""}`);
    }
    out.push(paint("dim", "  (--all lists every item)"));
  }
  const events = m.memory_events.filter((e) => e.type !== "added");
  if (events.length > 0) out.push(`${paint("bold", "memory events:")} ${countsOf(events.map((e) => e.type))}`);
  for (const note of options.notes ?? []) out.push(paint("dim", `note: ${note}`));
  return `${out.join("\n")}\n`;
}
