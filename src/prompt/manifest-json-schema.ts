import { ManifestSchema } from "./manifest-schema.ts";

/** The manifest's JSON Schema document (TypeBox's symbols dropped). */
export function manifestJsonSchema(): Record<string, unknown> {
  return JSON.parse(JSON.stringify(ManifestSchema)) as Record<string, unknown>;
}
