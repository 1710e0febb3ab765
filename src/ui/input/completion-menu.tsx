import { Box, Text } from "ink";
import { memo } from "react";
import { terminalSafe, terminalSafeLiteral } from "../terminal-safe-text.ts";
import { useTheme } from "../theme-context.tsx";
import type { CompletionItem } from "./completion.ts";

const MAX_ROWS = 6;

interface CompletionMenuProps {
  items: readonly CompletionItem[];
  selected: number;
}

export const CompletionMenu = memo(function CompletionMenu({ items, selected }: CompletionMenuProps) {
  const theme = useTheme();
  const first = Math.max(0, Math.min(selected - MAX_ROWS + 1, items.length - MAX_ROWS));
  const shown = items.slice(first, first + MAX_ROWS);
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
      {items.length > MAX_ROWS && <Text>{theme.dim(`  ${items.length} matches · ↑/↓ to choose`)}</Text>}
    </Box>
  );
});
