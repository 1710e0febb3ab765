/**
 * Every style the REPL uses, in one place. Colors go through here so `NO_COLOR` can drop them while
 * keeping the attributes (bold, dim, inverse) that carry meaning without color, such as the cursor.
 * Chalk itself ignores `NO_COLOR`, which is why this layer exists.
 */
import { Chalk, type ChalkInstance } from "chalk";

type Style = (text: string) => string;

export interface Theme {
  /** Whether colors are emitted at all (false under NO_COLOR or on a terminal without color). */
  color: boolean;
  bold: Style;
  dim: Style;
  italic: Style;
  underline: Style;
  inverse: Style;
  strike: Style;
  accent: Style;
  heading: Style;
  inlineCode: Style;
  codeBlock: Style;
  link: Style;
  success: Style;
  warning: Style;
  error: Style;
  diffAdd: Style;
  diffRemove: Style;
  diffHunk: Style;
  barFilled: Style;
  barHigh: Style;
}

export interface ThemeOptions {
  /** Chalk level: 0 none, 1 basic, 2 256 colors, 3 truecolor. */
  level: 0 | 1 | 2 | 3;
  /** False drops colors but keeps attributes (NO_COLOR). */
  color: boolean;
}

/** True when the NO_COLOR convention (https://no-color.org) asks for no color: set and not empty. */
export function noColorRequested(env: Record<string, string | undefined>): boolean {
  const value = env["NO_COLOR"];
  return value !== undefined && value !== "";
}

export function createTheme(options: ThemeOptions): Theme {
  const c: ChalkInstance = new Chalk({ level: options.level });
  const colored = options.color && options.level > 0;
  const tint = (style: Style, fallback: Style = (text) => text): Style => (colored ? style : fallback);
  return {
    color: colored,
    bold: (t) => c.bold(t),
    dim: (t) => c.dim(t),
    italic: (t) => c.italic(t),
    underline: (t) => c.underline(t),
    inverse: (t) => c.inverse(t),
    strike: (t) => c.strikethrough(t),
    accent: tint((t) => c.cyan(t)),
    heading: tint(
      (t) => c.bold.magenta(t),
      (t) => c.bold(t),
    ),
    // Without color, inline code keeps its backticks so it still stands out.
    inlineCode: tint(
      (t) => c.yellow(t),
      (t) => `\`${t}\``,
    ),
    codeBlock: tint((t) => c.yellow(t)),
    link: tint(
      (t) => c.blue.underline(t),
      (t) => c.underline(t),
    ),
    success: tint((t) => c.green(t)),
    warning: tint(
      (t) => c.yellow(t),
      (t) => c.bold(t),
    ),
    error: tint(
      (t) => c.red(t),
      (t) => c.bold(t),
    ),
    diffAdd: tint((t) => c.green(t)),
    diffRemove: tint((t) => c.red(t)),
    diffHunk: tint(
      (t) => c.cyan(t),
      (t) => c.dim(t),
    ),
    barFilled: tint((t) => c.green(t)),
    barHigh: tint((t) => c.red(t)),
  };
}

/** A theme with no escape codes at all, for tests and plain output. */
export const plainTheme: Theme = createTheme({ level: 0, color: false });
