import { Box, Text, useAnimation, type DOMElement } from "ink";
import type { RefObject } from "react";
import { MarkdownText } from "../markdown/markdown-text.tsx";
import { useTheme } from "../theme-context.tsx";
import { TranscriptItemView } from "../transcript/transcript-item-view.tsx";
import type { LiveTurn } from "../transcript/transcript-items.ts";

const SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

function Spinner() {
  const { frame } = useAnimation({ interval: 100 });
  const theme = useTheme();
  return <Text>{theme.accent(SPINNER[frame % SPINNER.length] ?? "·")}</Text>;
}

interface LiveTurnViewProps {
  live: LiveTurn;
  width: number;
  /** Lines the streaming block may take before older lines are hidden (they reach scrollback when settled). */
  maxTextLines: number;
  /** The streaming block's box, measured by the frame budget (../live-frame-budget.ts). */
  textRef?: RefObject<DOMElement | null>;
}

/** The turn in progress: items still changing, the open markdown block and a working indicator. */
export function LiveTurnView({ live, width, maxTextLines, textRef }: LiveTurnViewProps) {
  const theme = useTheme();
  const activity = live.retry
    ? theme.warning(
        `retrying (attempt ${live.retry.attempt}) in ${(live.retry.delayMs / 1000).toFixed(1)}s: ${live.retry.reason}`,
      )
    : live.reasoning !== ""
      ? theme.dim(`thinking: ${live.reasoning.replace(/\s+/g, " ").trim()}`)
      : theme.dim("working");
  return (
    <Box flexDirection="column">
      {live.pending.map((item) => (
        <TranscriptItemView key={item.id} item={item} width={width} />
      ))}
      {live.openText.trim() !== "" && (
        <Box ref={textRef} marginTop={live.itemsPushed > 0 ? 1 : 0}>
          <MarkdownText source={live.openText} width={width} maxLines={maxTextLines} />
        </Box>
      )}
      {/* The approval prompt below says what the turn waits for; the indicator would only take a row. */}
      {!live.approval && (
        <Box marginTop={1}>
          <Spinner />
          <Text wrap="truncate-end">
            {" "}
            {activity} {theme.dim("· Esc to interrupt")}
          </Text>
        </Box>
      )}
    </Box>
  );
}
