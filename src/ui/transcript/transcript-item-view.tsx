import { Box, Text } from "ink";
import { memo } from "react";
import { MarkdownText } from "../markdown/markdown-text.tsx";
import { useTheme } from "../theme-context.tsx";
import { CommandPanel } from "./command-panel.tsx";
import { NoticeRow } from "./notice-row.tsx";
import { ToolCallRow } from "./tool-call-row.tsx";
import type { TranscriptItem } from "./transcript-items.ts";

const STOP_LABEL = {
  aborted: "[aborted]",
  incomplete: "[incomplete: the model stopped early; the notice above says why]",
  error: "[stopped by an error]",
  max_steps: "[stopped: too many tool steps in one turn]",
} as const;

interface TranscriptItemViewProps {
  item: TranscriptItem;
  width: number;
}

/** One finished (or pending) transcript item. */
export const TranscriptItemView = memo(function TranscriptItemView({ item, width }: TranscriptItemViewProps) {
  const theme = useTheme();
  switch (item.kind) {
    case "banner":
      return (
        <Box flexDirection="column">
          <Text>
            {theme.bold(theme.accent("valarmind"))} {theme.dim(`· ${item.model} · session ${item.sessionId}`)}
          </Text>
          <Text>{theme.dim("Enter sends · Alt+Enter or Ctrl+J for a new line · /help · Ctrl+D exits")}</Text>
        </Box>
      );
    case "user":
      return (
        <Box marginTop={1} marginBottom={1}>
          <Text>
            {theme.accent("› ")}
            {theme.bold(item.text)}
          </Text>
        </Box>
      );
    case "markdown":
      return (
        <Box marginTop={item.gapBefore ? 1 : 0}>
          <MarkdownText source={item.source} width={width} />
        </Box>
      );
    case "tool":
      return (
        <Box marginTop={1}>
          <ToolCallRow tool={item.tool} />
        </Box>
      );
    case "notice":
      return (
        <Box marginTop={1}>
          <NoticeRow tone={item.tone} text={item.text} {...(item.hint === undefined ? {} : { hint: item.hint })} />
        </Box>
      );
    case "command":
      return (
        <Box marginTop={1}>
          <CommandPanel command={item.command} output={item.output} />
        </Box>
      );
    case "turn_stop":
      return (
        <Text>
          {item.reason === "aborted" ? theme.warning(STOP_LABEL.aborted) : theme.dim(STOP_LABEL[item.reason])}
        </Text>
      );
  }
});
