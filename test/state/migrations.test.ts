import { describe, expect, test } from "bun:test";
import { migrateState, STATE_MIGRATIONS, type Migration } from "../../src/state/migrations.ts";
import { STATE_SCHEMA_VERSION } from "../../src/state/schema.ts";

const steps: Migration[] = [
  { from: 0, describe: "rename objective to goal", up: ({ objective, ...rest }) => ({ ...rest, goal: objective }) },
  { from: 1, describe: "add blockers", up: (doc) => ({ ...doc, blockers: [] }) },
];

describe("migrateState", () => {
  test("chains steps up to the target version", () => {
    const out = migrateState({ schema_version: 0, objective: "g" }, steps, 2);
    expect(out).toEqual({
      kind: "migrated",
      doc: { schema_version: 2, goal: "g", blockers: [] },
      from: 0,
      steps: ["v0→v1: rename objective to goal", "v1→v2: add blockers"],
    });
  });

  test("a current document passes through; a newer one is reported, never downgraded", () => {
    expect(migrateState({ schema_version: 2 }, steps, 2).kind).toBe("current");
    expect(migrateState({ schema_version: 3 }, steps, 2)).toEqual({ kind: "newer", version: 3 });
  });

  test("a missing step or a missing version is unreadable", () => {
    expect(migrateState({ schema_version: 0 }, [], 1)).toEqual({
      kind: "unreadable",
      reason: "not a valarmind state file: its schema_version is 0, and the oldest format valarmind wrote is 1",
    });
    expect(migrateState({ schema_version: 1 }, [], 2)).toEqual({ kind: "unreadable", reason: "at schema_version 1, which this valarmind cannot migrate (no step from 1 to 2)" });
    expect(migrateState({}, steps, 2)).toMatchObject({ kind: "unreadable", reason: "not a valarmind state file: its schema_version is missing (expected an integer, 2 today)" });
    expect(migrateState({ schema_version: "1" }, steps, 2).kind).toBe("unreadable");
  });

  test("the registry covers every version below the current one", () => {
    for (let v = 1; v < STATE_SCHEMA_VERSION; v++) expect(STATE_MIGRATIONS.some((m) => m.from === v)).toBe(true);
  });
});
