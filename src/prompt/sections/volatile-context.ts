/**
 * Volatile context: the date and time the turn started, git branch and changed files, and the
 * files and symbols the session has touched. Taken once per turn, at its first request, and kept
 * with the turn in the window (ADR 0074): so it is a delta — only what changed since the window's
 * earlier turns showed it (the time when the minute moved on, git lines that are new or gone,
 * touched files and symbols the window's turns do not name yet). A fold takes turns, and what
 * they showed, out of the window; the next turn shows it again. Branch and file names come from the repository (a path can read
 * `</volatile_context>`), so this is data in a user message, escaped like every tagged body.
 */
import type { TouchedEntity } from "../../memory/touched.ts";
import type { ContextShown, Turn } from "../../memory/turn.ts";
import { tagged, takenPiece, type Section, type SectionContext } from "../section.ts";

const MAX_FILES = 8;
const MAX_SYMBOLS = 8;

function pad(n: number): string {
  return String(n).padStart(2, "0");
}

/** Local time to the minute with its UTC offset: "2026-01-31 Sat 12:34 (UTC-03:00)". */
export function formatLocalTime(date: Date): string {
  const day = date.toLocaleDateString("en-US", { weekday: "short" });
  const offset = -date.getTimezoneOffset();
  const sign = offset >= 0 ? "+" : "-";
  const abs = Math.abs(offset);
  const stamp = `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${day} ${pad(date.getHours())}:${pad(date.getMinutes())}`;
  return `${stamp} (UTC${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)})`;
}

/** "src/a.ts 2/5": edited twice, read five times; what the session did with the file. */
function describeEntity(e: TouchedEntity): string {
  return `${e.name} ${e.edits}/${e.reads}`;
}

/** The latest of what the window's turns showed: what this turn's context need not repeat. */
export function contextSeen(turns: readonly Turn[]): { time?: string; git?: { head: string; changes: string[] }; files: Set<string>; symbols: Set<string> } {
  const seen: { time?: string; git?: { head: string; changes: string[] }; files: Set<string>; symbols: Set<string> } = { files: new Set(), symbols: new Set() };
  for (const turn of turns) {
    const shown = turn.context?.shown;
    if (!shown) continue;
    if (shown.time !== undefined) seen.time = shown.time;
    if (shown.git !== undefined) seen.git = shown.git;
    for (const entry of shown.files ?? []) seen.files.add(entry);
    for (const entry of shown.symbols ?? []) seen.symbols.add(entry);
  }
  return seen;
}

/** The volatile context's lines for this turn — only what the window's turns have not shown — and what they show. */
export function volatileContextDelta(ctx: Pick<SectionContext, "now" | "git" | "touchedFiles" | "touchedSymbols" | "turns">): { lines: string[]; shown: ContextShown } {
  const seen = contextSeen(ctx.turns);
  const lines: string[] = [];
  const shown: ContextShown = {};
  const time = formatLocalTime(ctx.now);
  if (time !== seen.time) {
    lines.push(`time: ${time}`);
    shown.time = time;
  }
  if (ctx.git) {
    const { branch, upstream, changes, changeCount } = ctx.git;
    const more = changeCount > changes.length ? [`… ${changeCount - changes.length} more`] : [];
    const head = `branch ${branch}${upstream ? ` [${upstream}]` : ""}, ${changeCount === 0 ? "clean" : `${changeCount} changed`}`;
    const listed = [...changes, ...more];
    const before = seen.git;
    if (!before || before.head !== head || before.changes.join("\n") !== listed.join("\n")) {
      lines.push(`git: ${head}`);
      const known = new Set(before?.changes ?? []);
      for (const change of listed) if (!known.has(change)) lines.push(`  ${change}`);
      const now = new Set(listed);
      const gone = (before?.changes ?? []).filter((change) => !now.has(change) && !change.startsWith("… "));
      if (gone.length > 0) lines.push(`  no longer listed: ${gone.join(", ")}`);
      shown.git = { head, changes: listed };
    }
  }
  // A file or symbol is told when the window's turns do not name it yet: their own calls show what
  // happened to it since, so a grown count alone is not news.
  const files = ctx.touchedFiles.slice(0, MAX_FILES).filter((e) => !seen.files.has(e.name));
  if (files.length > 0) {
    lines.push(`touched files (edits/reads): ${files.map(describeEntity).join(", ")}`);
    shown.files = files.map((e) => e.name);
  }
  const symbols = ctx.touchedSymbols.slice(0, MAX_SYMBOLS).filter((e) => !seen.symbols.has(e.name));
  if (symbols.length > 0) {
    lines.push(`touched symbols: ${symbols.map((s) => `${s.name} (${s.mentions}×)`).join(", ")}`);
    shown.symbols = symbols.map((e) => e.name);
  }
  return { lines, shown };
}

export const volatileContextSection: Section = {
  id: "volatile_context",
  region: "context",
  stable: false,
  placement: "message",
  role: "user",
  type: "volatile_context",
  format: "text",
  reason: "volatile_context",
  render: (ctx) => {
    const taken = ctx.task?.context;
    if (taken) return takenPiece(volatileContextSection, taken.context);
    const { lines, shown } = volatileContextDelta(ctx);
    if (lines.length === 0) return "";
    const what = [shown.time && "time", shown.git && "git status", shown.files && `${shown.files.length} touched files`, shown.symbols && `${shown.symbols.length} symbols`].filter(Boolean).join(", ");
    return [
      {
        id: "volatile_context",
        type: "volatile_context",
        format: "text",
        reason: "volatile_context",
        detail: `${what}: what changed since the window's turns showed it`,
        placement: "message",
        role: "user",
        text: tagged("volatile_context", lines.join("\n"), { source: "clock, git status, session" }),
      },
    ];
  },
};
