/**
 * Replacing secrets whose values are known (from the environment, or learned from an assignment)
 * by a marker naming them, wherever they stand alone as a whole token.
 */
import { redactionMarker, standsAlone } from "./token-boundary.ts";

export interface NamedSecret {
  name: string;
  value: string;
}

/** Replaces every stand-alone occurrence of each secret's value; linear in the text per secret. */
export function redactKnownValues(text: string, secrets: readonly NamedSecret[]): string {
  let out = text;
  for (const { name, value } of secrets) {
    let at = out.indexOf(value);
    if (at === -1) continue;
    let result = "";
    let from = 0;
    while (at !== -1) {
      const end = at + value.length;
      if (standsAlone(out, at, end)) {
        result += `${out.slice(from, at)}${redactionMarker(name)}`;
        from = end;
        at = out.indexOf(value, end);
      } else {
        at = out.indexOf(value, at + 1);
      }
    }
    out = result + out.slice(from);
  }
  return out;
}
