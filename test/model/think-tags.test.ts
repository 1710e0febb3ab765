import { describe, expect, test } from "bun:test";
import { createThinkSplitter, type ThinkPiece } from "../../src/model/think-tags.ts";

function split(chunks: readonly string[]): { reasoning: string; text: string } {
  const s = createThinkSplitter();
  const pieces: ThinkPiece[] = [...chunks.flatMap((c) => s.push(c)), ...s.end()];
  return { reasoning: pieces.filter((p) => p.kind === "reasoning").map((p) => p.text).join(""), text: pieces.filter((p) => p.kind === "text").map((p) => p.text).join("") };
}

describe("a leading <think> block in content", () => {
  test("is reasoning, the blank lines after it are dropped, the rest is the answer; tags may come in pieces", () => {
    expect(split(["<think>", "plan it", "</think>", "\n\n", "Hello!"])).toEqual({ reasoning: "plan it", text: "Hello!" });
    expect(split(["  <th", "ink>a", "b</th", "ink>\nHi"])).toEqual({ reasoning: "ab", text: "Hi" });
    expect(split(["<think>x</think>Answer with </think> inside"])).toEqual({ reasoning: "x", text: "Answer with </think> inside" });
  });

  test("anything else is the answer, untouched: no block, a tag later on, a look-alike start", () => {
    expect(split(["Hello ", "<think>not a block</think>"])).toEqual({ reasoning: "", text: "Hello <think>not a block</think>" });
    expect(split(["<thing>", " x"])).toEqual({ reasoning: "", text: "<thing> x" });
    expect(split(["<th"])).toEqual({ reasoning: "", text: "<th" });
  });

  test("a block never closed (the answer was cut) stays reasoning", () => {
    expect(split(["<think>still thinking", " when it stopped"])).toEqual({ reasoning: "still thinking when it stopped", text: "" });
  });
});
