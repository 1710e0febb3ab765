import { Box, Text } from "ink";
import { memo } from "react";
import type { CommandOutput } from "../../agent/front-end-contract.ts";
import { useTheme } from "../theme-context.tsx";

interface CommandPanelProps {
  command: string;
  output: CommandOutput;
}

/**
 * The output of a slash command: a title line, then the lines as the core laid them out. No border:
 * tables from the core are sized for the terminal and a frame would make them wrap at 80 columns.
 */
export const CommandPanel = memo(function CommandPanel({ command, output }: CommandPanelProps) {
  const theme = useTheme();
  const name = command.replace(/^\//, "").split(/\s/)[0] ?? "";
  // The core often titles the output with the command's own name; say it once.
  const titleText = output.title.replace(/^\//, "").toLowerCase() === name.toLowerCase() ? "" : output.title;
  const title = output.isError ? theme.error(titleText) : theme.bold(titleText);
  return (
    <Box flexDirection="column">
      <Text>
        {theme.dim("── ")}
        {theme.accent(command)} {title}
      </Text>
      {output.lines.length > 0 && <Text>{output.lines.join("\n")}</Text>}
    </Box>
  );
});
