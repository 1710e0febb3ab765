/**
 * Inline markdown tokens (from marked's lexer) to one styled terminal string. Every piece of the
 * source is made terminal-safe before it is styled: the lexer decodes numeric entities
 * (`&#27;` is ESC), so a safe source alone is not enough.
 */
import type { Token } from "marked";
import { terminalSafe } from "../terminal-safe-text.ts";
import type { Theme } from "../theme.ts";

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', "#39": "'", apos: "'", nbsp: " " };

/** The model sometimes writes HTML entities; the terminal shows the characters. */
export function decodeEntities(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|#39|apos|nbsp);/g, (_, name: string) => ENTITIES[name] ?? "");
}

/** Text of a token as shown: entities decoded, terminal controls removed or shown. */
export function leafText(text: string): string {
  return terminalSafe(decodeEntities(text));
}

function childTokens(token: Token): Token[] | undefined {
  const tokens: unknown = (token as { tokens?: unknown }).tokens;
  return Array.isArray(tokens) ? (tokens as Token[]) : undefined;
}

function tokenText(token: Token): string {
  const text: unknown = (token as { text?: unknown }).text;
  return typeof text === "string" ? text : token.raw;
}

export function renderInline(tokens: readonly Token[], theme: Theme): string {
  let out = "";
  for (const token of tokens) out += renderInlineToken(token, theme);
  return out;
}

function renderInlineToken(token: Token, theme: Theme): string {
  const children = childTokens(token);
  const inner = (): string => (children ? renderInline(children, theme) : leafText(tokenText(token)));
  switch (token.type) {
    case "strong":
      return theme.bold(inner());
    case "em":
      return theme.italic(inner());
    case "del":
      return theme.strike(inner());
    case "codespan":
      return theme.inlineCode(leafText(tokenText(token)));
    case "br":
      return "\n";
    case "escape":
      return leafText(tokenText(token));
    case "link": {
      const href: unknown = (token as { href?: unknown }).href;
      const label = inner();
      const shown = typeof href === "string" ? terminalSafe(href) : undefined;
      if (shown === undefined || shown === label || shown === `mailto:${label}`) return theme.link(label);
      return `${theme.link(label)} ${theme.dim(`(${shown})`)}`;
    }
    case "image":
      return theme.dim(`[image: ${leafText(tokenText(token))}]`);
    case "html":
      return terminalSafe(token.raw);
    case "checkbox":
      return "";
    default:
      return inner();
  }
}
