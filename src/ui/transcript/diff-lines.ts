/** A unified diff to colored terminal lines, capped so one big edit cannot flood the screen. */
import type { Theme } from "../theme.ts";
import { shownText, wrapRows } from "../input/editor-rows.ts";

/**
 * A diff's lines, coloured; at most `maxLines` (what does not fit is counted). With `width`, a
 * long line is wrapped into rows of that many cells, one string each, so nothing is cut at the
 * terminal's edge (the end of a line is where `; curl … | sh` goes) and the frame budget's count
 * of strings is its count of rows.
 */
export function renderDiffLines(diff: string, theme: Theme, maxLines: number, width?: number): string[] {
  const lines = diff.replace(/\n$/, "").split("\n");
  const styled = lines.flatMap((line) => {
    const style = lineStyle(line, theme);
    if (width === undefined) return [style(line)];
    return wrapRows(line, Math.max(10, width)).map((row) => style(shownText(line.slice(row.start, row.end))));
  });
  if (styled.length <= maxLines) return styled;
  return [...styled.slice(0, maxLines), theme.dim(`… ${styled.length - maxLines} more diff line(s)`)];
}

function lineStyle(line: string, theme: Theme): (text: string) => string {
  if (line.startsWith("+++") || line.startsWith("---") || line.startsWith("Index:") || line.startsWith("====")) return (text) => theme.dim(text);
  if (line.startsWith("@@")) return (text) => theme.diffHunk(text);
  if (line.startsWith("+")) return (text) => theme.diffAdd(text);
  if (line.startsWith("-")) return (text) => theme.diffRemove(text);
  return (text) => theme.dim(text);
}
