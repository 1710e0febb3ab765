/** A unified diff to colored terminal lines, capped so one big edit cannot flood the screen. */
import type { Theme } from "../theme.ts";

export function renderDiffLines(diff: string, theme: Theme, maxLines: number): string[] {
  const lines = diff.replace(/\n$/, "").split("\n");
  const styled = lines.map((line) => {
    if (line.startsWith("+++") || line.startsWith("---") || line.startsWith("Index:") || line.startsWith("====")) {
      return theme.dim(line);
    }
    if (line.startsWith("@@")) return theme.diffHunk(line);
    if (line.startsWith("+")) return theme.diffAdd(line);
    if (line.startsWith("-")) return theme.diffRemove(line);
    return theme.dim(line);
  });
  if (styled.length <= maxLines) return styled;
  return [...styled.slice(0, maxLines), theme.dim(`… ${styled.length - maxLines} more diff line(s)`)];
}
