/**
 * Volatile context: the date and time the turn started, git branch and changed files, and the
 * files and symbols the session has touched. Near the end of the request, so its changes never
 * break the cached prefix; taken once per turn, so steps of one turn still share a prefix.
 * Branch and file names come from the repository (a path can read `</volatile_context>`), so this
 * is data in a user message, escaped like every tagged body.
 */
import type { TouchedEntity } from "../../memory/touched.ts";
import { tagged, type Section } from "../section.ts";

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
    const lines = [`time: ${formatLocalTime(ctx.now)}`];
    if (ctx.git) {
      const { branch, upstream, changes, changeCount } = ctx.git;
      lines.push(`git: branch ${branch}${upstream ? ` [${upstream}]` : ""}, ${changeCount === 0 ? "clean" : `${changeCount} changed`}`);
      for (const change of changes) lines.push(`  ${change}`);
      if (changeCount > changes.length) lines.push(`  … ${changeCount - changes.length} more`);
    }
    const files = ctx.touchedFiles.slice(0, MAX_FILES);
    if (files.length > 0) lines.push(`touched files (edits/reads): ${files.map(describeEntity).join(", ")}`);
    const symbols = ctx.touchedSymbols.slice(0, MAX_SYMBOLS);
    if (symbols.length > 0) lines.push(`touched symbols: ${symbols.map((s) => `${s.name} (${s.mentions}×)`).join(", ")}`);
    return [
      {
        id: "volatile_context",
        type: "volatile_context",
        format: "text",
        reason: "volatile_context",
        detail: `time${ctx.git ? ", git status" : ""}${files.length ? `, ${files.length} touched files` : ""}${symbols.length ? `, ${symbols.length} symbols` : ""}`,
        placement: "message",
        role: "user",
        text: tagged("volatile_context", lines.join("\n"), { source: "clock, git status, session" }),
      },
    ];
  },
};
