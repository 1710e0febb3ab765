import { describe, expect, test } from "bun:test";
import { diffProjections } from "../../src/state/projection-diff.ts";
import type { StateProjection } from "../../src/state/projection.ts";

const base = (): StateProjection => ({
  goal: "Ship v1",
  now: "Writing tests",
  decisions_recent: [{ id: "ADR-0001", title: "Use SQLite", date: "2026-11-01" }],
  tasks_open: [
    { id: "T-1", title: "Parser", status: "in_progress" },
    { id: "T-2", title: "Docs", status: "open" },
  ],
  blockers: [],
  conventions: { tests: "bun test", style: "prettier" },
});

describe("diffProjections", () => {
  test("equal projections have no changes", () => {
    expect(diffProjections(base(), base())).toBeUndefined();
  });

  test("lists changed fields, new or changed items, and what is gone", () => {
    const after = base();
    after.now = "Reviewing";
    after.tasks_open = [{ id: "T-1", title: "Parser", status: "done" }, { id: "T-3", title: "Release", status: "open" }];
    after.decisions_recent.push({ id: "ADR-0002", title: "No vanity slugs", date: "2026-11-02" });
    after.blockers.push({ id: "B-1", text: "waiting for review" });
    after.conventions = { tests: "bun test --timeout 30000" };
    expect(diffProjections(base(), after)).toEqual({
      now: "Reviewing",
      decisions_recent: [{ id: "ADR-0002", title: "No vanity slugs", date: "2026-11-02" }],
      tasks_open: [{ id: "T-1", title: "Parser", status: "done" }, { id: "T-3", title: "Release", status: "open" }],
      blockers: [{ id: "B-1", text: "waiting for review" }],
      conventions: { tests: "bun test --timeout 30000" },
      removed: ["T-2", "conventions.style"],
    });
  });
});
