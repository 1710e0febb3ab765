/**
 * Validation of state.json against the schema (ajv, draft 2020-12, formats). Every message names
 * the file and the JSON pointer and says what was expected. The validator is compiled ahead of
 * time from schema.ts (see validator-build.ts), so no schema compilation happens per process.
 */
import type { ErrorObject } from "ajv";
import validate from "./generated/state-validator.js";
import type { WorkingState } from "./schema.ts";

export type ValidationResult = { ok: true; state: WorkingState } | { ok: false; errors: string[] };

function describe(error: ErrorObject): string {
  const at = error.instancePath === "" ? "/" : error.instancePath;
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case "required":
      return `${at}: missing required property "${String(params.missingProperty)}"`;
    case "additionalProperties":
      return `${at}: unexpected property "${String(params.additionalProperty)}" (not in the schema)`;
    case "enum":
      return `${at}: must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(", ")}`;
    case "const":
      return `${at}: must be ${JSON.stringify(params.allowedValue)}`;
    case "format":
      return `${at}: must be a ${String(params.format)} string (e.g. 2026-01-31T12:00:00Z)`;
    case "pattern":
      return `${at}: must match ${String(params.pattern)}`;
    case "propertyNames":
      return `${at}: property name "${String(params.propertyName)}" is not allowed (no leading or trailing spaces, not empty)`;
    default:
      return `${at}: ${error.message ?? error.keyword}`;
  }
}

/** Validates `value`; errors read `<file>: <pointer>: <what was expected>`. */
export function validateState(value: unknown, file: string): ValidationResult {
  if (validate(value)) return { ok: true, state: value as WorkingState };
  const errors = (validate.errors ?? []).map((e) => `${file}: ${describe(e)}`);
  return { ok: false, errors: [...new Set(errors)] };
}

/** A `state_snapshot` record's state, validated; undefined when it is damaged (a new one is taken). */
export function checkedSnapshot(snapshot: { turn: number; state: unknown } | undefined, file: string): { turn: number; state: WorkingState } | undefined {
  if (!snapshot) return undefined;
  const checked = validateState(snapshot.state, file);
  return checked.ok ? { turn: snapshot.turn, state: checked.state } : undefined;
}
