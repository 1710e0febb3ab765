/**
 * Writes the published JSON Schemas of `chat -p`'s machine-readable output into docs/schemas/:
 * the stream-json line (src/agent/event-schema.ts) and the json result object
 * (src/agent/headless-result.ts). Regenerate after changing either:
 *   bun src/schema/output-schemas-build.ts
 * test/cli/output-schemas.test.ts fails when a committed file is out of date.
 */
import { fileURLToPath } from "node:url";
import { eventStreamJsonSchema } from "../agent/event-schema.ts";
import { resultJsonSchema } from "../agent/headless-result.ts";

export interface OutputSchemaFile {
  /** Absolute path of the committed file. */
  path: string;
  schema: Record<string, unknown>;
}

export function outputSchemaFiles(): OutputSchemaFile[] {
  const at = (name: string) => fileURLToPath(new URL(`../../docs/schemas/${name}`, import.meta.url));
  return [
    { path: at("event-stream.schema.json"), schema: eventStreamJsonSchema() },
    { path: at("result.schema.json"), schema: resultJsonSchema() },
  ];
}

/** The file's text: two-space JSON and a final newline. */
export function schemaFileText(schema: Record<string, unknown>): string {
  return `${JSON.stringify(schema, null, 2)}\n`;
}

if (import.meta.main) {
  for (const file of outputSchemaFiles()) {
    await Bun.write(file.path, schemaFileText(file.schema));
    process.stdout.write(`wrote ${file.path}\n`);
  }
}
