/**
 * Text shown on one line of a listing: whitespace runs (newlines, tabs) as one space, cut at `max`
 * characters with "…". A session's first message, a command's description.
 *
 *   oneLine("fix the\n\ntest", 8)  // "fix the…"
 */
export function oneLine(text: string, max = Number.POSITIVE_INFINITY): string {
  const line = text.replace(/\s+/g, " ").trim();
  if (line.length <= max) return line;
  // A cut between the halves of a surrogate pair (an emoji) would leave half a character.
  const end = /[\ud800-\udbff]/.test(line.charAt(max - 2)) ? max - 2 : max - 1;
  return `${line.slice(0, end)}…`;
}
