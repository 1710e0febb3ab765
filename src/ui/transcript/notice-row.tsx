import { Box, Text } from "ink";
import { memo } from "react";
import { useTheme } from "../theme-context.tsx";
import type { NoticeTone } from "./transcript-items.ts";

interface NoticeRowProps {
  tone: NoticeTone;
  text: string;
  hint?: string;
}

/** A message from the core or the UI: errors and warnings always say what to do next. */
export const NoticeRow = memo(function NoticeRow({ tone, text, hint }: NoticeRowProps) {
  const theme = useTheme();
  const styled =
    tone === "error"
      ? theme.error(`✗ ${text}`)
      : tone === "warning"
        ? theme.warning(`! ${text}`)
        : theme.dim(`· ${text}`);
  return (
    <Box flexDirection="column">
      <Text>{styled}</Text>
      {hint !== undefined && hint !== "" && <Text>{theme.dim(`  → ${hint}`)}</Text>}
    </Box>
  );
});
