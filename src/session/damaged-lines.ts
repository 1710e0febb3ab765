/**
 * Where damaged transcript lines go: `<transcript>.damaged.jsonl` (0600), one JSON object per
 * damaged line — `{v, line, reason, text, found_at}`, `text` verbatim — so nothing in a damaged
 * transcript is lost and each damaged line is reported once: a line already in the side file is
 * not reported again. A transcript that cannot be read at all is moved to `<transcript>.unreadable`.
 */
import { appendFileSync, existsSync, readFileSync, renameSync } from "node:fs";
import { PRIVATE_FILE_MODE } from "../config/valarmind-dir.ts";
import type { DamagedLine } from "./transcript-read.ts";

const SIDE_FILE_VERSION = 1;

export function damagedSideFile(transcript: string): string {
  return `${transcript}.damaged.jsonl`;
}

/** The damaged lines the side file already holds, as `line:text` keys. */
function knownDamage(sideFile: string): Set<string> {
  const known = new Set<string>();
  if (!existsSync(sideFile)) return known;
  for (const line of readFileSync(sideFile, "utf8").split("\n")) {
    try {
      const value: unknown = JSON.parse(line);
      if (typeof value === "object" && value !== null && "line" in value && "text" in value) known.add(`${String(value.line)}:${String(value.text)}`);
    } catch {
      // A torn line of the side file itself: its entry is written again, which is harmless.
    }
  }
  return known;
}

/** The damaged lines not yet in the side file (those to report). */
export function unreportedDamage(transcript: string, damaged: readonly DamagedLine[]): DamagedLine[] {
  if (damaged.length === 0) return [];
  const known = knownDamage(damagedSideFile(transcript));
  return damaged.filter((d) => !known.has(`${d.line}:${d.text}`));
}

/** Appends the not yet recorded damaged lines to the side file; returns them. Call holding the session's lock. */
export function setAsideDamage(transcript: string, damaged: readonly DamagedLine[]): DamagedLine[] {
  const fresh = unreportedDamage(transcript, damaged);
  if (fresh.length === 0) return [];
  const now = new Date().toISOString();
  const text = fresh.map((d) => `${JSON.stringify({ v: SIDE_FILE_VERSION, line: d.line, reason: d.reason, text: d.text, found_at: now })}\n`).join("");
  appendFileSync(damagedSideFile(transcript), text, { mode: PRIVATE_FILE_MODE });
  return fresh;
}

/** One notice for a read's damaged lines. */
export function damageNotice(transcript: string, damaged: readonly DamagedLine[], kept: boolean): string {
  const lines = damaged.map((d) => d.line).join(", ");
  const first = damaged[0];
  const why = first ? ` (line ${first.line}: ${first.reason})` : "";
  const where = kept ? `; kept verbatim in ${damagedSideFile(transcript)}` : "";
  return `${transcript}: ${damaged.length === 1 ? "line" : "lines"} ${lines} ${damaged.length === 1 ? "is" : "are"} damaged and skipped${why}${where}; the rest of the session is used`;
}

/** Moves an unreadable transcript out of the session list, never deleting it; returns the new path. */
export function setAsideUnreadable(transcript: string): string {
  let aside = `${transcript}.unreadable`;
  for (let n = 2; existsSync(aside); n++) aside = `${transcript}.unreadable-${n}`;
  renameSync(transcript, aside);
  return aside;
}
