import { Box, Text } from "ink";
import { memo } from "react";
import type { Theme } from "../theme.ts";
import { useTheme } from "../theme-context.tsx";
import { renderDiffLines } from "./diff-lines.ts";
import type { ToolRowData, ToolStatus } from "./transcript-items.ts";

const DECISION_LABEL = {
  allow_once: "allowed once",
  allow_session: "allowed for this session",
  deny: "denied",
} as const;

function statusGlyph(status: ToolStatus, theme: Theme): string {
  switch (status) {
    case "running":
      return theme.accent("◌");
    case "awaiting_approval":
      return theme.warning("?");
    case "done":
      return theme.success("✓");
    case "error":
      return theme.error("✗");
    case "denied":
      return theme.warning("⊘");
  }
}

interface ToolCallRowProps {
  tool: ToolRowData;
  /** Diff lines shown before the rest is summarised. */
  maxDiffLines?: number;
}

/** One tool call: name, target, a one-line result and, for edits, the colored diff. */
export const ToolCallRow = memo(function ToolCallRow({ tool, maxDiffLines = 20 }: ToolCallRowProps) {
  const theme = useTheme();
  const decision = tool.decision ? theme.dim(` (${DECISION_LABEL[tool.decision]})`) : "";
  const summary = tool.summary?.split("\n")[0] ?? "";
  const summaryStyle = tool.status === "error" ? theme.error : theme.dim;
  return (
    <Box flexDirection="column">
      <Text wrap="truncate-end">
        {statusGlyph(tool.status, theme)} {theme.bold(tool.name)} {tool.target}
        {decision}
      </Text>
      {summary !== "" && (
        <Text wrap="truncate-end">
          {"  "}
          {theme.dim("⎿ ")}
          {summaryStyle(summary)}
        </Text>
      )}
      {tool.diff !== undefined && tool.diff !== "" && tool.status !== "denied" && (
        <Box paddingLeft={4}>
          <Text>{renderDiffLines(tool.diff, theme, maxDiffLines).join("\n")}</Text>
        </Box>
      )}
    </Box>
  );
});
