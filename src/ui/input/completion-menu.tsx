import { Box, Text } from "ink";
import { memo } from "react";
import { terminalSafe, terminalSafeLiteral } from "../terminal-safe-text.ts";
import { useTheme } from "../theme-context.tsx";
import type { CompletionItem } from "./completion.ts";

/** Choices shown at most when the screen has room (the live frame's budget may allow fewer). */
export const MAX_MENU_ROWS = 6;

interface CompletionMenuProps {
  items: readonly CompletionItem[];
  selected: number;
  maxRows?: number;
}

export const CompletionMenu = memo(function CompletionMenu({ items, selected, maxRows = MAX_MENU_ROWS }: CompletionMenuProps) {
  const theme = useTheme();
  const limit = Math.max(1, Math.min(MAX_MENU_ROWS, maxRows));
  const first = Math.max(0, Math.min(selected - limit + 1, items.length - limit));
  const shown = items.slice(first, first + limit);
  return (
    <Box flexDirection="column" paddingLeft={2}>
      {shown.map((item, index) => {
        const active = first + index === selected;
        // Labels are file names from the repository (or a custom command's usage): every character shown.
        const text = terminalSafeLiteral(item.label);
        const label = active ? theme.inverse(` ${text} `) : ` ${text} `;
        return (
          <Text key={item.value} wrap="truncate-end">
            {label}
            {item.detail ? theme.dim(`  ${terminalSafe(item.detail)}`) : ""}
          </Text>
        );
      })}
      {items.length > limit && <Text wrap="truncate-end">{theme.dim(`  ${items.length} matches · ↑/↓ to choose`)}</Text>}
    </Box>
  );
});
