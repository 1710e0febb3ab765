/**
 * Migrations of transcript records by their `v` (ADR 0078), the way src/state/migrations.ts
 * migrates state.json: each step turns a record of version `from` into version `from + 1`, and
 * `migrateRecord` chains them up to TRANSCRIPT_VERSION. Pure functions on one parsed line: a
 * reader migrates in memory and never writes; a session whose header is older is continued in a
 * new file in the current format (src/memory/session-memory.ts), the old file kept as it is.
 *
 * To change a record's shape: bump TRANSCRIPT_VERSION (transcript-schema.ts describes the new
 * shape only) and append a step `{ from: <old version>, describe, up }` here, with a test that reads
 * a file of the old version (test/session/transcript-migrations.test.ts shows how).
 */
import { describeError } from "../errors.ts";
import { TRANSCRIPT_VERSION } from "./transcript-schema.ts";

/** One transcript line as parsed JSON, before it is checked against the schema. */
export type RawRecord = Record<string, unknown>;

export interface TranscriptMigration {
  /** The version this step reads; it writes `from + 1`. */
  from: number;
  describe: string;
  /** Pure: the record's new shape. `v` is set by the chain. */
  up(record: RawRecord): RawRecord;
}

/** The first released format: no valarmind ever wrote an older transcript. */
export const FIRST_TRANSCRIPT_VERSION = 1;

/** Version 1 is the first released format, so there is nothing to migrate yet. */
export const TRANSCRIPT_MIGRATIONS: readonly TranscriptMigration[] = [];

export type RecordMigration =
  /** Already current, or without a usable `v`: the schema check decides. */
  | { kind: "current"; value: unknown }
  | { kind: "migrated"; record: RawRecord; from: number }
  | { kind: "newer"; version: number }
  | { kind: "unmigratable"; version: number; reason: string };

/** A record's `v`, if it is a non-negative integer. */
export function recordVersion(value: unknown): number | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value) || !("v" in value)) return undefined;
  const v = value.v;
  return typeof v === "number" && Number.isInteger(v) && v >= 0 ? v : undefined;
}

function isRawRecord(value: unknown): value is RawRecord {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function migrateRecord(
  value: unknown,
  migrations: readonly TranscriptMigration[] = TRANSCRIPT_MIGRATIONS,
  target: number = TRANSCRIPT_VERSION,
): RecordMigration {
  const version = recordVersion(value);
  if (version === undefined || version === target || !isRawRecord(value)) return { kind: "current", value };
  if (version > target) return { kind: "newer", version };
  const oldest = Math.min(FIRST_TRANSCRIPT_VERSION, ...migrations.map((m) => m.from));
  if (version < oldest) {
    return { kind: "unmigratable", version, reason: `record version ${version} is older than any transcript valarmind wrote (the first is ${oldest})` };
  }
  let current: RawRecord = value;
  for (let v = version; v < target; v++) {
    const step = migrations.find((m) => m.from === v);
    if (!step) return { kind: "unmigratable", version, reason: `record version ${version}: this valarmind has no migration from ${v} to ${v + 1}` };
    try {
      current = { ...step.up(current), v: v + 1 };
    } catch (error) {
      return { kind: "unmigratable", version, reason: `record version ${version} could not be migrated (v${v}→v${v + 1}, ${step.describe}): ${describeError(error)}` };
    }
  }
  return { kind: "migrated", record: current, from: version };
}
