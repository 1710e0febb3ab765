/**
 * Long arguments of past tool calls in the prompt. A window turn keeps its form from the moment it
 * enters the window until it folds (ADR 0074), but long string arguments of its tool calls (a
 * whole file passed to write_file, a long edit) are reduced to their head and size: the result is
 * on disk and the model can read it again. A pure function of the arguments, so a window turn
 * renders to the same bytes on every request and the cached prefix holds.
 */
import { sliceWhole } from "../slice-whole.ts";

/** Strings of tool arguments longer than this are cut in window turns. */
export const ARGUMENT_KEEP_CHARS = 240;

/**
 * In the current turn arguments stay whole up to this many characters (the model sees what it just
 * sent); a longer one (a 5 MB old_string, a 100 KB path) is cut like a past turn's, but keeping more.
 */
export const CURRENT_ARGUMENT_KEEP_CHARS = 16_000;

function condenseValue(value: unknown, keep: number): unknown {
  if (typeof value === "string") {
    if (value.length <= keep) return value;
    const lines = value.split("\n").length;
    return `${value.slice(0, keep / 2)}…[${value.length} characters, ${lines} lines in all; not repeated]`;
  }
  if (Array.isArray(value)) return value.map((v) => condenseValue(v, keep));
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, condenseValue(v, keep)]));
  }
  return value;
}

/**
 * A tool call's argument JSON with strings over `keep` characters cut; unparsable JSON is cut as
 * text, and so is JSON still longer than `keep` (and a little) once its strings are cut (an array of
 * 60,000 small numbers, 10,000 keys: no string to cut, yet a request over any budget).
 */
export function condenseToolArguments(argumentsJson: string, keep = ARGUMENT_KEEP_CHARS): string {
  if (argumentsJson.length <= keep) return argumentsJson;
  const cap = keep + 256;
  let condensed: string;
  try {
    condensed = JSON.stringify(condenseValue(JSON.parse(argumentsJson), keep));
  } catch {
    return `${sliceWhole(argumentsJson, keep)}…`;
  }
  return condensed.length <= cap ? condensed : `${sliceWhole(condensed, cap)}…[${argumentsJson.length} characters of arguments in all; not repeated]`;
}
