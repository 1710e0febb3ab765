/**
 * Block markdown tokens to terminal lines, wrapped to a width. Pure: the same token and width give
 * the same lines, so finished blocks can be memoised and the live block re-rendered cheaply.
 */
import { lexer, type Token, type Tokens } from "marked";
import stringWidth from "string-width";
import wrapAnsi from "wrap-ansi";
import { terminalSafe } from "../terminal-safe-text.ts";
import type { Theme } from "../theme.ts";
import { leafText, renderInline } from "./render-inline.ts";

const MIN_WIDTH = 10;

function wrap(text: string, width: number): string[] {
  return wrapAnsi(text, Math.max(MIN_WIDTH, width), { hard: true, trim: false }).split("\n");
}

/** Prefixes the first line with `first` and the others with `rest` (hanging indent). */
function indent(lines: string[], first: string, rest: string): string[] {
  return lines.map((line, index) => (index === 0 ? first : rest) + line);
}

function inlineOf(token: Token, theme: Theme): string {
  const tokens: unknown = (token as { tokens?: unknown }).tokens;
  if (Array.isArray(tokens)) return renderInline(tokens as Token[], theme);
  const text: unknown = (token as { text?: unknown }).text;
  return leafText(typeof text === "string" ? text : token.raw);
}

/** Renders a list of block tokens; blocks are separated by one blank line unless `tight`. */
export function renderBlocks(tokens: readonly Token[], width: number, theme: Theme, tight = false): string[] {
  const out: string[] = [];
  for (const token of tokens) {
    if (token.type === "space" || token.type === "def") continue;
    const lines = renderBlock(token, width, theme);
    if (lines.length === 0) continue;
    if (out.length > 0 && !tight) out.push("");
    out.push(...lines);
  }
  return out;
}

export function renderBlock(token: Token, width: number, theme: Theme): string[] {
  switch (token.type) {
    case "heading": {
      const depth = (token as Tokens.Heading).depth;
      const text = inlineOf(token, theme);
      const styled = depth <= 2 ? theme.heading(depth === 1 ? theme.underline(text) : text) : theme.bold(text);
      return wrap(styled, width);
    }
    case "paragraph":
    case "text":
      return wrap(inlineOf(token, theme), width);
    case "code":
      return renderCode(token as Tokens.Code, width, theme);
    case "list":
      return renderList(token as Tokens.List, width, theme);
    case "blockquote": {
      const inner = renderBlocks((token as Tokens.Blockquote).tokens, width - 2, theme);
      return inner.map((line) => theme.dim("│ ") + theme.italic(line));
    }
    case "hr":
      return [theme.dim("─".repeat(Math.min(width, 40)))];
    case "table":
      return renderTable(token as Tokens.Table, width, theme);
    case "html":
      return wrap(theme.dim(terminalSafe(token.raw.trimEnd())), width);
    default:
      return wrap(terminalSafe(token.raw.trimEnd()), width);
  }
}

function renderCode(token: Tokens.Code, width: number, theme: Theme): string[] {
  const gutter = theme.dim("│ ");
  const body = terminalSafe(token.text)
    .split("\n")
    .flatMap((line) => wrap(theme.codeBlock(line), width - 2));
  const label = token.lang ? [theme.dim(`╭ ${terminalSafe(token.lang)}`)] : [];
  return [...label, ...body.map((line) => gutter + line)];
}

function renderList(list: Tokens.List, width: number, theme: Theme): string[] {
  const out: string[] = [];
  const start = typeof list.start === "number" ? list.start : 1;
  list.items.forEach((item, index) => {
    const marker = item.task ? (item.checked ? "☑ " : "☐ ") : list.ordered ? `${start + index}. ` : "• ";
    const pad = " ".repeat(stringWidth(marker));
    const body = renderBlocks(item.tokens, width - pad.length, theme, !list.loose);
    if (list.loose && index > 0) out.push("");
    out.push(...indent(body.length > 0 ? body : [""], theme.accent(marker), pad));
  });
  return out;
}

function renderTable(table: Tokens.Table, width: number, theme: Theme): string[] {
  const header = table.header.map((cell) => renderInline(cell.tokens, theme));
  const rows = table.rows.map((row) => row.map((cell) => renderInline(cell.tokens, theme)));
  const columns = header.length;
  const widths = header.map((cell, col) =>
    Math.max(stringWidth(cell), ...rows.map((row) => stringWidth(row[col] ?? ""))),
  );
  const separator = " │ ";
  const total = widths.reduce((sum, w) => sum + w, 0) + separator.length * (columns - 1);
  const line = (cells: string[]): string =>
    cells
      .map((cell, col) => cell + " ".repeat(Math.max(0, (widths[col] ?? 0) - stringWidth(cell))))
      .join(theme.dim(separator));
  if (total > width) {
    // Too wide to align: one wrapped line per row keeps every cell readable.
    return [header, ...rows].flatMap((cells, index) =>
      wrap(index === 0 ? theme.bold(cells.join(" │ ")) : cells.join(theme.dim(" │ ")), width),
    );
  }
  const rule = theme.dim(widths.map((w) => "─".repeat(w)).join("─┼─"));
  return [theme.bold(line(header)), rule, ...rows.map(line)];
}

/** Markdown source to terminal lines. */
export function renderMarkdown(source: string, width: number, theme: Theme): string[] {
  return renderBlocks(lexer(source), width, theme);
}
