import { Box, Text } from "ink";
import { memo } from "react";
import type { CommandOutput } from "../../agent/controller.ts";
import { useTheme } from "../theme-context.tsx";

interface CommandPanelProps {
  command: string;
  output: CommandOutput;
}

/** The output of a slash command: a titled block of lines (tables arrive pre-aligned from the core). */
export const CommandPanel = memo(function CommandPanel({ command, output }: CommandPanelProps) {
  const theme = useTheme();
  const title = output.isError ? theme.error(output.title) : theme.bold(output.title);
  return (
    <Box flexDirection="column" borderStyle="round" borderDimColor paddingX={1}>
      <Text>
        {theme.dim(command)} {title}
      </Text>
      {output.lines.length > 0 && <Text>{output.lines.join("\n")}</Text>}
    </Box>
  );
});
