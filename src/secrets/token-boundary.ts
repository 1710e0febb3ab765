/**
 * What counts as one word when deciding whether a match is a whole token: letters, digits, `_` and
 * `-`. A secret is redacted only where it stands alone, so `risk-assessment-module-refactor` is
 * never cut open by a key pattern or an environment value that happens to occur inside it.
 */
export function isTokenChar(code: number): boolean {
  return (
    (code >= 48 && code <= 57) || // 0-9
    (code >= 65 && code <= 90) || // A-Z
    (code >= 97 && code <= 122) || // a-z
    code === 95 || // _
    code === 45 // -
  );
}

/** True when `text.slice(start, end)` is not glued to a longer token on either side. */
export function standsAlone(text: string, start: number, end: number): boolean {
  const before = start > 0 && isTokenChar(text.charCodeAt(start)) && isTokenChar(text.charCodeAt(start - 1));
  const after = end < text.length && isTokenChar(text.charCodeAt(end - 1)) && isTokenChar(text.charCodeAt(end));
  return !before && !after;
}

/** The marker that replaces a secret on disk; `what` names the variable or the key format. */
export function redactionMarker(what: string): string {
  return `[redacted:${what}]`;
}

export const MARKER_PREFIX = "[redacted:";
