import { Box, Text } from "ink";
import { memo } from "react";
import { terminalSafeLiteral } from "../terminal-safe-text.ts";
import type { Theme } from "../theme.ts";
import { useTheme } from "../theme-context.tsx";
import type { EditorBuffer } from "./editor-buffer.ts";
import { cursorRow, rowWidth, rowWindow, shownText, wrapRows, type EditorRow } from "./editor-rows.ts";

/** Rows of a long prompt shown around the cursor when the screen has room; the rest is counted, not drawn. */
export const MAX_EDITOR_ROWS = 8;

interface EditorViewProps {
  buffer: EditorBuffer;
  chips: readonly string[];
  placeholder: string;
  /** Whether to draw the cursor (hidden while another prompt owns the keyboard). */
  focused: boolean;
  /** The terminal's width: rows are wrapped to it here, so the rows drawn are the rows counted. */
  columns: number;
  /** Rows of text drawn at most (the live frame's budget; MAX_EDITOR_ROWS when the screen has room). */
  maxRows?: number;
}

/** A piece of the prompt as drawn: controls (from a paste, a completed file name) shown, never sent to the terminal. */
function highlightChips(text: string, chips: readonly string[], theme: Theme): string {
  let out = shownText(text);
  for (const chip of chips) out = out.split(chip).join(theme.accent(chip));
  return out;
}

/** One row as drawn, with the block cursor when it is in this row. */
function drawRow(text: string, row: EditorRow, cursor: number | undefined, chips: readonly string[], theme: Theme): string {
  const shown = text.slice(row.start, row.end);
  if (cursor === undefined) return highlightChips(shown, chips, theme);
  const column = cursor - row.start;
  const at = shown.codePointAt(column);
  const char = at === undefined ? " " : String.fromCodePoint(at);
  return highlightChips(shown.slice(0, column), chips, theme) + theme.inverse(shownText(char)) + highlightChips(shown.slice(column + char.length), chips, theme);
}

/** The prompt with a block cursor; inverse video stays visible under NO_COLOR. */
export const EditorView = memo(function EditorView({ buffer, chips, placeholder, focused, columns, maxRows = MAX_EDITOR_ROWS }: EditorViewProps) {
  const theme = useTheme();
  const prompt = theme.accent("› ");
  if (buffer.text === "") {
    return (
      <Text wrap="truncate-end">
        {prompt}
        {focused ? theme.inverse(" ") : ""}
        {theme.dim(placeholder)}
      </Text>
    );
  }
  const rows = wrapRows(buffer.text, rowWidth(columns), chips);
  const cursorAt = cursorRow(rows, buffer.cursor);
  const view = rowWindow(rows, cursorAt, maxRows);
  const drawn = rows.slice(view.first, view.first + view.shown).map((row, index) => {
    const at = view.first + index;
    return (at === 0 ? prompt : "  ") + drawRow(buffer.text, row, focused && at === cursorAt ? buffer.cursor : undefined, chips, theme);
  });
  return (
    <Box flexDirection="column">
      {view.above > 0 && <Text wrap="truncate-end">{theme.dim(`  … ${view.above} line(s) above`)}</Text>}
      <Text>{drawn.join("\n")}</Text>
      {view.below > 0 && <Text wrap="truncate-end">{theme.dim(`  … ${view.below} line(s) below`)}</Text>}
    </Box>
  );
});
