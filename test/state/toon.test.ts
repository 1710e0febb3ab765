import { describe, expect, test } from "bun:test";
import { decode } from "@toon-format/toon";
import { ValarmindError } from "../../src/errors.ts";
import * as ops from "../../src/state/ops.ts";
import { emptyState, type WorkingState } from "../../src/state/schema.ts";
import { checkRoundTrip, encodeStateToon } from "../../src/state/toon.ts";

const at = new Date("2026-05-05T05:05:05.000Z");
const TRICKY = [
  "commas, everywhere, here",
  "key: value: another",
  'double "quotes" and \'single\'',
  "line one\nline two\r\nline three",
  "tabs\tand\\backslashes\\",
  "unicode: café, 日本語, emoji 🚀, RTL עברית",
  "007",
  "1e3",
  "-12.50",
  "true",
  "false",
  "null",
  "",
  " leading and trailing spaces ",
  "- looks like a list item",
  "[3]: looks like a header",
  "{a,b}",
  "#not a comment",
  "<|endoftext|>",
];

function trickyState(): WorkingState {
  let s = emptyState(at);
  s = ops.setGoal(s, TRICKY[0] ?? "").state;
  for (const text of TRICKY) {
    const title = text.trim() === "" ? "empty-looking" : text;
    s = ops.addTask(s, title, { note: text }, at).state;
    s = ops.addDecision(s, title, text, at).state;
    s = ops.addBlocker(s, title, {}, at).state;
    // A convention's name is one line (the schema's rule; setConvention refuses a line break).
    s = ops.setConvention(s, title.trim().replace(/\s*[\r\n]+\s*/g, " "), text).state;
  }
  return { ...s, now: TRICKY.join(" | ") };
}

describe("encodeStateToon", () => {
  test("round-trips tricky strings exactly (the check runs inside, and again here)", async () => {
    const state = trickyState();
    const out = await encodeStateToon(state, { maxTokens: 1_000_000 });
    expect(out.omitted).toEqual([]);
    expect(decode(out.toon)).toEqual(JSON.parse(JSON.stringify(out.projection)));
    const titles = out.projection.tasks_open.map((t) => t.title);
    for (const text of TRICKY.filter((t) => t.trim() !== "")) expect(titles).toContain(text.trim());
    expect(typeof out.projection.tasks_open.find((t) => t.title === "007")?.title).toBe("string");
    expect(out.projection.conventions["1e3"]).toBe("1e3");
  });

  test("round-trips empty arrays and an empty map", async () => {
    const out = await encodeStateToon(emptyState(at));
    expect(out.projection).toEqual({ goal: "", now: "", decisions_recent: [], tasks_open: [], blockers: [], conventions: {} });
    expect(decode(out.toon)).toEqual({ goal: "", now: "", decisions_recent: [], tasks_open: [], blockers: [], conventions: {} });
    expect(out.tokens).toBeGreaterThan(0);
  });

  test("a round trip that does not match is a clear error naming the path", () => {
    const projection = { goal: "g", now: "", decisions_recent: [], tasks_open: [], blockers: [], conventions: {} };
    expect(() => checkRoundTrip("goal: h\nnow: \"\"\ndecisions_recent[0]:\ntasks_open[0]:\nblockers[0]:\nconventions:", projection)).toThrow(
      'TOON round trip failed: decoded state differs from the projection at /goal: expected "g", decoded "h"',
    );
    expect(() => checkRoundTrip("a:\n  - [", projection)).toThrow(ValarmindError);
  });
});
