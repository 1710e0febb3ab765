/**
 * Tool descriptions (and the ADR template) live in `text/<name>.md`, like prompt text, so they can
 * be read and reviewed as prose. Each file is read once per process.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";

const loaded = new Map<string, string>();

export function toolText(name: string): string {
  const hit = loaded.get(name);
  if (hit !== undefined) return hit;
  const text = readFileSync(join(import.meta.dir, "text", `${name}.md`), "utf8").trim();
  loaded.set(name, text);
  return text;
}
