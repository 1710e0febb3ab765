/**
 * How older turns are carried in the prompt. The window keeps every turn, but not every turn at
 * full size: turns in settled blocks (the stable part of the window) are condensed — the user's
 * message and the answer cut at a sentence boundary, each tool call reduced to its name and target
 * (and its error, if it failed) — while
 * the turns since the last block boundary stay verbatim. In every window turn, long string
 * arguments of past tool calls (a whole file passed to write_file, a long edit) are reduced to
 * their head and size: the result is on disk and the model can read it again.
 * Condensing is a pure function of the turn, so a settled turn renders to the same bytes on every
 * request and the cached prefix holds.
 */
import type { Turn } from "./turn.ts";

/** Strings of tool arguments longer than this are cut in window turns. */
export const ARGUMENT_KEEP_CHARS = 240;
/** Settled turns keep this much of the user's message and of the answer. */
export const SETTLED_USER_CHARS = 280;
export const SETTLED_ANSWER_CHARS = 280;
const TOOL_LINE_CHARS = 160;

function cutAt(text: string, max: number): string {
  const flat = text.trim();
  if (flat.length <= max) return flat;
  const head = flat.slice(0, max);
  // Prefer ending at a sentence or line boundary in the last third of the allowance.
  const boundary = Math.max(head.lastIndexOf(". "), head.lastIndexOf("\n"), head.lastIndexOf("! "), head.lastIndexOf("? "));
  const end = boundary > max * 0.66 ? boundary + 1 : max;
  return `${head.slice(0, end).trimEnd()} […${flat.length - end} more characters]`;
}

function condenseValue(value: unknown): unknown {
  if (typeof value === "string") {
    if (value.length <= ARGUMENT_KEEP_CHARS) return value;
    const lines = value.split("\n").length;
    return `${value.slice(0, ARGUMENT_KEEP_CHARS / 2)}…[${value.length} characters, ${lines} lines in all; not repeated]`;
  }
  if (Array.isArray(value)) return value.map(condenseValue);
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, condenseValue(v)]));
  }
  return value;
}

/** A past tool call's argument JSON with long strings cut; unparsable JSON is cut as text. */
export function condenseToolArguments(argumentsJson: string): string {
  if (argumentsJson.length <= ARGUMENT_KEEP_CHARS) return argumentsJson;
  try {
    return JSON.stringify(condenseValue(JSON.parse(argumentsJson)));
  } catch {
    return `${argumentsJson.slice(0, ARGUMENT_KEEP_CHARS)}…`;
  }
}

function toolLine(name: string, argumentsJson: string, output: string, isError: boolean): string {
  let target = "";
  try {
    const args: unknown = JSON.parse(argumentsJson);
    if (typeof args === "object" && args !== null) {
      const first = Object.entries(args).find(([, v]) => typeof v === "string");
      if (first) target = ` ${String(first[1]).split("\n")[0]?.slice(0, 80) ?? ""}`;
    }
  } catch {
    // Arguments the model got wrong: the line names the tool only.
  }
  // A settled call is named, not re-told: its result only when it failed (the model may retry it).
  if (!isError) return `- ${name}${target}`;
  return `- ${name}${target} (failed): ${(output.split("\n")[0] ?? "").slice(0, TOOL_LINE_CHARS)}`;
}

/** A settled turn as two short messages: what the user asked, and what was done and answered. */
export function condensedTurnText(turn: Turn): { user: string; assistant: string } {
  const tools: string[] = [];
  let answer = "";
  for (const item of turn.items) {
    if (item.kind === "tool") tools.push(toolLine(item.name, item.arguments, item.output, item.isError));
    else if (item.text.trim() !== "") answer = item.text;
  }
  const parts: string[] = [];
  if (tools.length > 0) parts.push(`[tools used]\n${tools.join("\n")}`);
  if (answer !== "") parts.push(cutAt(answer, SETTLED_ANSWER_CHARS));
  if (turn.stopReason && turn.stopReason !== "completed") parts.push(`[turn ended: ${turn.stopReason}]`);
  return { user: cutAt(turn.user, SETTLED_USER_CHARS), assistant: parts.join("\n") || "[no answer]" };
}
