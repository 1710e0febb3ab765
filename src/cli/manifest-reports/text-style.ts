/**
 * Terminal styling for the prompt command's report: node's util.styleText, only when stdout is a
 * terminal and NO_COLOR is unset (https://no-color.org), so pipes and tests get plain text.
 */
import { styleText } from "node:util";

export type Tone = "bold" | "dim" | "green" | "yellow" | "red" | "cyan" | "magenta";

export type Paint = (tone: Tone | Tone[], text: string) => string;

export function colorEnabled(stream: { isTTY?: boolean } = process.stdout, env: Record<string, string | undefined> = process.env): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return false;
  if (env.TERM === "dumb") return false;
  return stream.isTTY === true;
}

export function makePaint(enabled: boolean): Paint {
  return enabled ? (tone, text) => styleText(tone, text, { validateStream: false }) : (_tone, text) => text;
}

/** Visible width (ANSI escapes do not count). */
export function visibleLength(text: string): number {
  // Strip SGR sequences (what styleText emits) before measuring.
  return text.replace(/\x1b\[[0-9;]*m/g, "").length;
}

export function padEnd(text: string, width: number): string {
  return text + " ".repeat(Math.max(0, width - visibleLength(text)));
}

export function padStart(text: string, width: number): string {
  return " ".repeat(Math.max(0, width - visibleLength(text))) + text;
}

export function formatInt(n: number): string {
  return n.toLocaleString("en-US");
}

export function percent(part: number, whole: number, digits = 0): string {
  if (whole <= 0) return "–";
  return `${((part / whole) * 100).toFixed(digits)}%`;
}
