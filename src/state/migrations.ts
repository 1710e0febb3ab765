/**
 * Migrations of state.json by `schema_version`. Each step turns a document of version `from` into
 * version `from + 1`; `migrateState` chains them up to the current version. A document from a newer
 * valarmind is refused (never downgraded): the caller turns that into a usage error.
 */
import { STATE_SCHEMA_VERSION } from "./empty-state.ts";

export type JsonDocument = Record<string, unknown>;

export interface Migration {
  from: number;
  describe: string;
  up(doc: JsonDocument): JsonDocument;
}

/** The first released format: no valarmind ever wrote an older schema_version. */
export const FIRST_STATE_SCHEMA_VERSION = 1;

/** Version 1 is the first released format, so there is nothing to migrate yet. */
export const STATE_MIGRATIONS: readonly Migration[] = [];

export type MigrationOutcome =
  | { kind: "current"; doc: JsonDocument }
  | { kind: "migrated"; doc: JsonDocument; from: number; steps: string[] }
  | { kind: "newer"; version: number }
  | { kind: "unreadable"; reason: string };

export function readSchemaVersion(doc: JsonDocument): number | undefined {
  const v = doc.schema_version;
  return typeof v === "number" && Number.isInteger(v) && v >= 0 ? v : undefined;
}

export function migrateState(
  doc: JsonDocument,
  migrations: readonly Migration[] = STATE_MIGRATIONS,
  target: number = STATE_SCHEMA_VERSION,
): MigrationOutcome {
  const version = readSchemaVersion(doc);
  if (version === undefined) {
    const found = doc.schema_version === undefined ? "missing" : JSON.stringify(doc.schema_version);
    return { kind: "unreadable", reason: `not a valarmind state file: its schema_version is ${found} (expected an integer, ${target} today)` };
  }
  if (version > target) return { kind: "newer", version };
  if (version === target) return { kind: "current", doc };
  const oldest = Math.min(FIRST_STATE_SCHEMA_VERSION, ...migrations.map((m) => m.from));
  if (version < oldest) {
    return {
      kind: "unreadable",
      reason: `not a valarmind state file: its schema_version is ${version}, and the oldest format valarmind wrote is ${oldest}`,
    };
  }
  let current = doc;
  const steps: string[] = [];
  for (let v = version; v < target; v++) {
    const step = migrations.find((m) => m.from === v);
    if (!step) return { kind: "unreadable", reason: `at schema_version ${version}, which this valarmind cannot migrate (no step from ${v} to ${v + 1})` };
    current = { ...step.up(current), schema_version: v + 1 };
    steps.push(`v${v}→v${v + 1}: ${step.describe}`);
  }
  return { kind: "migrated", doc: current, from: version, steps };
}
