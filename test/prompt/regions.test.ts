import { describe, expect, test } from "bun:test";
import { Regions } from "../../src/prompt/regions.ts";
import type { Section } from "../../src/prompt/section.ts";
import { MAIN_TURN_ORDER, mainTurnRegions, summaryRequestRegions } from "../../src/prompt/standard-regions.ts";

function section(id: string, region: string): Section {
  return { id, region, stable: true, placement: "message", type: "instructions", format: "text", reason: "test", render: () => id };
}

describe("Regions", () => {
  const base = Regions.of([section("a1", "a"), section("b1", "b"), section("a2", "a"), section("c1", "c")]);

  test("groups sections by region in first-appearance order", () => {
    expect(base.names()).toEqual(["a", "b", "c"]);
    expect(base.entries().map((e) => e.section.id)).toEqual(["a1", "a2", "b1", "c1"]);
  });

  test("every operation returns a new value and leaves the original alone", () => {
    const reordered = base.withRegionalOrder(["c", "a"]);
    const without = base.withoutRegions(["b"]);
    const only = base.withOnlyRegions(["c", "b"]);
    const added = base.withRegion("d", section("d1", "d"));
    const replaced = base.withRegion("a", [section("x", "a")]);
    expect(base.names()).toEqual(["a", "b", "c"]);
    expect(base.sectionsOf("a").map((s) => s.id)).toEqual(["a1", "a2"]);
    expect(reordered.names()).toEqual(["c", "a", "b"]);
    expect(without.names()).toEqual(["a", "c"]);
    expect(without.has("b")).toBe(false);
    expect(only.names()).toEqual(["b", "c"]);
    expect(added.names()).toEqual(["a", "b", "c", "d"]);
    expect(replaced.entries().map((e) => e.section.id)).toEqual(["x", "b1", "c1"]);
  });

  test("ordering by an unknown region is an error, not a silent no-op", () => {
    expect(() => base.withRegionalOrder(["zz"])).toThrow(/no region named zz/);
  });

  test("the main turn is in cache-aware order; a summary request takes only what it needs", () => {
    expect(mainTurnRegions().names()).toEqual([...MAIN_TURN_ORDER]);
    expect(summaryRequestRegions().names()).toEqual(["summary_rules", "summary", "evicted"]);
  });
});
