/** What a resize prints again (src/ui/transcript/reprint-window.ts): the newest ~N lines of items. */
import { describe, expect, test } from "bun:test";
import { reprintWindow } from "../../../src/ui/transcript/reprint-window.ts";
import type { TranscriptItem } from "../../../src/ui/transcript/transcript-items.ts";

const user = (id: string, text: string): TranscriptItem => ({ kind: "user", id, text });
const answer = (id: string, lines: number, first = 1): TranscriptItem => ({
  kind: "markdown",
  id,
  source: Array.from({ length: lines }, (_, i) => `line ${first + i}`).join("\n"),
  gapBefore: false,
});
const tool = (id: string): TranscriptItem => ({ kind: "tool", id, tool: { callId: id, name: "read_file", target: "a.ts", status: "done", summary: "12 lines" } });

describe("reprintWindow", () => {
  test("a transcript within the limit is printed again whole", () => {
    const items = [user("u1", "hi"), answer("a1", 10), tool("t1")];
    expect(reprintWindow(items, 100)).toEqual({ from: 0, through: 3, leftOut: 0, cutLines: 0, items });
  });

  test("older items beyond the limit are left out; an answer straddling it keeps its last lines", () => {
    const items = [user("u1", "first"), answer("a1", 50), user("u2", "second"), answer("a2", 30, 100)];
    const window = reprintWindow(items, 40);
    // u2 (2 lines) + a2 (30) = 32; a1 keeps its last 8 lines.
    expect(window).toMatchObject({ from: 1, through: 4, leftOut: 1, cutLines: 42 });
    expect(window.items.map((item) => item.id)).toEqual(["a1", "u2", "a2"]);
    expect(window.items[0]).toMatchObject({ kind: "markdown", source: Array.from({ length: 8 }, (_, i) => `line ${43 + i}`).join("\n") });
  });

  test("a cut inside a fenced code block reopens the fence, so the tail still renders as code", () => {
    const source = ["Here:", "```ts", ...Array.from({ length: 20 }, (_, i) => `const x${i} = ${i};`), "```", "Done."].join("\n");
    const window = reprintWindow([{ kind: "markdown", id: "a", source, gapBefore: false }], 5);
    const tail = window.items[0];
    expect(tail?.kind === "markdown" ? tail.source : "").toBe(["```", "const x17 = 17;", "const x18 = 18;", "const x19 = 19;", "```", "Done."].join("\n"));
  });

  test("an item that cannot be cut is left out whole; the newest item always stays", () => {
    const big: TranscriptItem = { kind: "command", id: "c1", command: "window", output: { title: "window", lines: Array.from({ length: 500 }, (_, i) => `row ${i}`) } };
    expect(reprintWindow([user("u1", "a"), big, user("u2", "b")], 10)).toMatchObject({ from: 2, leftOut: 2, cutLines: 0 });
    expect(reprintWindow([user("u1", "a"), big], 10)).toMatchObject({ from: 1, leftOut: 1, items: [big] });
  });
});
