/**
 * Long arguments of past tool calls in the prompt. A window turn keeps its form from the moment it
 * enters the window until it folds (ADR 0074), but long string arguments of its tool calls (a
 * whole file passed to write_file, a long edit) are reduced to their head and size: the result is
 * on disk and the model can read it again. A pure function of the arguments, so a window turn
 * renders to the same bytes on every request and the cached prefix holds.
 */

/** Strings of tool arguments longer than this are cut in window turns. */
export const ARGUMENT_KEEP_CHARS = 240;

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
