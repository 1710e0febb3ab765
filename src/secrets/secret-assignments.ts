/**
 * Values given to secret-named keys in text: `.env` lines (`GITHUB_TOKEN=…`, `export API_KEY=…`),
 * JSON (`"api_key": "…"`), YAML (`password: …`), flags (`--token=…`). The name must say secret
 * (a part ending in `key` or `token`, or containing secret / password / passwd / credential /
 * passphrase) and the value must look like one: at least 8 characters, not a number, not a
 * variable reference (`$TOKEN`), no spaces; an unquoted value must also mix letters and digits,
 * because unquoted "values" in code are mostly expressions (`apiKey = options.apiKey`).
 *
 * Linear time: names are found with a regex that can start only at the beginning of a run of
 * name characters; a value is read only after a secret name and then skipped; the search for a
 * closing quote remembers how far it looked, so unclosed quotes cannot make it quadratic.
 */
import { MARKER_PREFIX, redactionMarker } from "./token-boundary.ts";

const NAME_THEN_SEPARATOR = /(?<![A-Za-z0-9_.-])(["']?)([A-Za-z0-9_.-]+)\1[ \t]*[:=][ \t]*/g;
const UNQUOTED_VALUE = /[^\s"'`,;(){}[\]<>]+/y;
const MIN_VALUE_LENGTH = 8;

/** `GITHUB_TOKEN`, `api_key`, `apiKey`, `db-password`, `--client-secret`; not `tokens`, `max_tokens`, `keyboard`. */
export function isSecretName(name: string): boolean {
  const lower = name.toLowerCase();
  if (/secret|password|passwd|credential|passphrase/.test(lower)) return true;
  const parts = name
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .toLowerCase()
    .split(/[^a-z0-9]+/);
  return parts.some((part) => part.endsWith("key") || part.endsWith("token"));
}

function looksLikeSecretValue(value: string, quoted: boolean): boolean {
  if (value.length < MIN_VALUE_LENGTH || value.startsWith(MARKER_PREFIX) || value.startsWith("$")) return false;
  if (/\s/.test(value) || /^\d+$/.test(value)) return false;
  return quoted || (/[A-Za-z]/.test(value) && /[0-9]/.test(value));
}

/** `text.indexOf(char, from)`, remembering the last answer so repeated look-ups never rescan. */
function indexFinder(text: string, char: string): (from: number) => number {
  let searchedFrom = Number.POSITIVE_INFINITY;
  let found = -1;
  return (from) => {
    if (searchedFrom <= from && (found === -1 || found >= from)) return found;
    searchedFrom = from;
    found = text.indexOf(char, from);
    return found;
  };
}

interface Value {
  start: number;
  end: number;
  quoted: boolean;
}

export interface AssignmentRedaction {
  text: string;
  /** The values redacted, with the names they were given (redact-secrets.ts remembers them). */
  found: Array<{ name: string; value: string }>;
}

export function redactSecretAssignments(text: string): AssignmentRedaction {
  const nextQuote: Record<string, (from: number) => number> = { '"': indexFinder(text, '"'), "'": indexFinder(text, "'") };
  const nextNewline = indexFinder(text, "\n");
  const finder = new RegExp(NAME_THEN_SEPARATOR.source, "g");
  let out = "";
  let from = 0;
  const found: Array<{ name: string; value: string }> = [];
  for (let match = finder.exec(text); match !== null; match = finder.exec(text)) {
    const name = match[2] ?? "";
    if (!isSecretName(name)) continue;
    const value = readValue(text, finder.lastIndex, nextQuote, nextNewline);
    if (value === undefined) continue;
    finder.lastIndex = Math.max(finder.lastIndex, value.end + (value.quoted ? 1 : 0));
    const secret = text.slice(value.start, value.end);
    if (!looksLikeSecretValue(secret, value.quoted)) continue;
    const shownName = name.replace(/^-+/, "");
    out += `${text.slice(from, value.start)}${redactionMarker(shownName)}`;
    found.push({ name: shownName, value: secret });
    from = value.end;
  }
  return { text: from === 0 ? text : out + text.slice(from), found };
}

function readValue(
  text: string,
  at: number,
  nextQuote: Record<string, (from: number) => number>,
  nextNewline: (from: number) => number,
): Value | undefined {
  const open = text[at];
  const findClose = open === undefined ? undefined : nextQuote[open];
  if (findClose) {
    const close = findClose(at + 1);
    const newline = nextNewline(at + 1);
    if (close === -1 || (newline !== -1 && newline < close)) return undefined;
    return { start: at + 1, end: close, quoted: true };
  }
  UNQUOTED_VALUE.lastIndex = at;
  const unquoted = UNQUOTED_VALUE.exec(text);
  return unquoted ? { start: at, end: at + unquoted[0].length, quoted: false } : undefined;
}
