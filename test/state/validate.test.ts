import { describe, expect, test } from "bun:test";
import { readFile } from "node:fs/promises";
import { emptyState } from "../../src/state/schema.ts";
import { validateState } from "../../src/state/validate.ts";
import { GENERATED_VALIDATOR, generateStateValidatorSource } from "../../src/state/validator-build.ts";

const file = "/repo/.valarmind/memory/state.json";
const base = () => emptyState(new Date("2026-01-01T00:00:00Z"));

function errorsOf(value: unknown): string[] {
  const r = validateState(value, file);
  if (r.ok) throw new Error("expected the value to be invalid");
  return r.errors;
}

describe("validateState", () => {
  test("the empty state is valid", () => {
    expect(validateState(base(), file).ok).toBe(true);
  });

  test("every error names the file, the JSON pointer and what was expected", () => {
    const bad = {
      ...base(),
      updated_at: "yesterday",
      surprise: 1,
      tasks_open: [{ id: "T-1", title: "t", status: "later", updated_at: "2026-01-01T00:00:00Z" }],
      decisions_recent: [{ id: "ADR-1", title: "d", why: "w", ts: "2026-01-01T00:00:00Z" }],
      conventions: { " padded ": "x", ok: 3 },
    };
    expect(errorsOf(bad).sort()).toEqual(
      [
        `${file}: /: unexpected property "surprise" (not in the schema)`,
        `${file}: /updated_at: must be a date-time string (e.g. 2026-01-31T12:00:00Z)`,
        `${file}: /tasks_open/0/status: must be one of "open", "in_progress", "blocked", "done"`,
        `${file}: /decisions_recent/0/id: must match ^ADR-[0-9]{4,}$`,
        `${file}: /conventions: unexpected property " padded " (not in the schema)`,
        `${file}: /conventions/ok: must be string`,
      ].sort(),
    );
  });

  test("missing fields and a wrong version are named", () => {
    const { goal: _goal, ...noGoal } = base();
    expect(errorsOf(noGoal)).toEqual([`${file}: /: missing required property "goal"`]);
    expect(errorsOf({ ...base(), schema_version: 2 })).toContain(`${file}: /schema_version: must be 1`);
  });
});

describe("the generated validator", () => {
  test("is up to date with schema.ts (regenerate: bun src/state/validator-build.ts)", async () => {
    expect(await readFile(GENERATED_VALIDATOR, "utf8")).toBe(await generateStateValidatorSource());
  });
});
