import { Text } from "ink";
import { memo, useMemo } from "react";
import { useTheme } from "../theme-context.tsx";
import { renderMarkdown } from "./render-blocks.ts";

interface MarkdownTextProps {
  source: string;
  width: number;
  /** Show only the last N lines, after a line saying how many are hidden (the live block must not outgrow the screen). */
  maxLines?: number;
}

export const MarkdownText = memo(function MarkdownText({ source, width, maxLines }: MarkdownTextProps) {
  const theme = useTheme();
  const lines = useMemo(() => renderMarkdown(source, width, theme), [source, width, theme]);
  if (maxLines !== undefined && lines.length > maxLines) {
    const hidden = lines.length - maxLines;
    const shown = maxLines > 0 ? lines.slice(-maxLines) : [];
    return <Text>{[theme.dim(`… ${hidden} more line(s) above`), ...shown].join("\n")}</Text>;
  }
  return <Text>{lines.join("\n")}</Text>;
});
