import { Box, Text } from "ink";
import { memo } from "react";
import { terminalSafeLiteral } from "../terminal-safe-text.ts";
import type { Theme } from "../theme.ts";
import { useTheme } from "../theme-context.tsx";
import type { EditorBuffer } from "./editor-buffer.ts";

/** Lines of a long prompt shown around the cursor; the rest is counted, not drawn. */
const MAX_VISIBLE_LINES = 8;

interface EditorViewProps {
  buffer: EditorBuffer;
  chips: readonly string[];
  placeholder: string;
  /** Whether to draw the cursor (hidden while another prompt owns the keyboard). */
  focused: boolean;
}

/** A piece of the prompt as drawn: controls (from a paste, a completed file name) shown, never sent to the terminal. */
function highlightChips(text: string, chips: readonly string[], theme: Theme): string {
  let out = terminalSafeLiteral(text);
  for (const chip of chips) out = out.split(chip).join(theme.accent(chip));
  return out;
}

/** The prompt with a block cursor; inverse video stays visible under NO_COLOR. */
export const EditorView = memo(function EditorView({ buffer, chips, placeholder, focused }: EditorViewProps) {
  const theme = useTheme();
  const prompt = theme.accent("› ");
  if (buffer.text === "") {
    return (
      <Text>
        {prompt}
        {focused ? theme.inverse(" ") : ""}
        {theme.dim(placeholder)}
      </Text>
    );
  }
  const lines = buffer.text.split("\n");
  let offset = 0;
  let cursorLine = 0;
  const rendered = lines.map((line, index) => {
    const start = offset;
    offset += line.length + 1;
    const hasCursor = focused && buffer.cursor >= start && buffer.cursor <= start + line.length;
    if (!hasCursor) return highlightChips(line, chips, theme);
    cursorLine = index;
    const column = buffer.cursor - start;
    const at = line.codePointAt(column);
    const char = at === undefined ? " " : String.fromCodePoint(at);
    return (
      highlightChips(line.slice(0, column), chips, theme) +
      theme.inverse(terminalSafeLiteral(char)) +
      highlightChips(line.slice(column + char.length), chips, theme)
    );
  });
  const first = Math.max(0, Math.min(cursorLine - Math.floor(MAX_VISIBLE_LINES / 2), lines.length - MAX_VISIBLE_LINES));
  const visible = rendered.slice(first, first + MAX_VISIBLE_LINES);
  const hiddenAbove = first;
  const hiddenBelow = lines.length - first - visible.length;
  return (
    <Box flexDirection="column">
      {hiddenAbove > 0 && <Text>{theme.dim(`  … ${hiddenAbove} line(s) above`)}</Text>}
      <Text>{visible.map((line, index) => (index === 0 && first === 0 ? prompt : "  ") + line).join("\n")}</Text>
      {hiddenBelow > 0 && <Text>{theme.dim(`  … ${hiddenBelow} line(s) below`)}</Text>}
    </Box>
  );
});
