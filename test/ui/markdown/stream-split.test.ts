import { describe, expect, test } from "bun:test";
import { splitSettled } from "../../../src/ui/markdown/stream-split.ts";

describe("splitSettled", () => {
  test("the last block stays open", () => {
    expect(splitSettled("# A\n\npara one\n\npara tw")).toEqual({ settled: ["# A", "para one"], open: "para tw" });
  });

  test("a blank line alone does not settle a list (it may continue)", () => {
    expect(splitSettled("- a\n- b\n\n").settled).toEqual([]);
  });

  test("an open code fence holds everything after it", () => {
    const split = splitSettled("intro\n\n```ts\nconst a = 1;\n\nconst b = 2;");
    expect(split.settled).toEqual(["intro"]);
    expect(split.open).toBe("```ts\nconst a = 1;\n\nconst b = 2;");
  });

  test("streaming char by char settles the same blocks and loses nothing", () => {
    const doc = "# Title\n\nA paragraph with `code`.\n\n- one\n- two\n\n```js\nx()\n```\n\nEnd.";
    const settled: string[] = [];
    let open = "";
    for (const char of doc) {
      const split = splitSettled(open + char);
      settled.push(...split.settled);
      open = split.open;
    }
    expect(settled).toEqual(["# Title", "A paragraph with `code`.", "- one\n- two", "```js\nx()\n```"]);
    expect([...settled, open].join("\n\n")).toBe(doc);
  });
});
