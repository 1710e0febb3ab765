/**
 * Text shown on one line of a listing: whitespace runs (newlines, tabs) as one space, cut at `max`
 * characters with "…". A session's first message, a command's description.
 *
 *   oneLine("fix the\n\ntest", 8)  // "fix the…"
 */
import { sliceWhole } from "./slice-whole.ts";

export function oneLine(text: string, max = Number.POSITIVE_INFINITY): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > max ? `${sliceWhole(line, max - 1)}…` : line;
}
