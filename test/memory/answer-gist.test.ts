/**
 * A long answer's window form (ADR 0087): its opening and close in whole sentences or code lines,
 * a marker naming what was left out and how to get it back, within the cap, and the same bytes
 * every time.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { answerGist, GIST_WHOLE_FACTOR } from "../../src/memory/answer-gist.ts";
import { exactCounter } from "../../src/prompt/builder.ts";

let count: (text: string) => number;
beforeAll(async () => {
  count = await exactCounter();
});

const sentences = (n: number, from = 1) =>
  Array.from({ length: n }, (_, i) => `Sentence ${from + i} says the cache for shard ${from + i} keeps its keys for ${(from + i) * 7} seconds.`).join(" ");

describe("answerGist", () => {
  test("an answer up to 1.5× the cap stays whole; 0 keeps every answer whole", () => {
    const short = sentences(3);
    expect(count(short)).toBeLessThanOrEqual(80 * GIST_WHOLE_FACTOR);
    expect(answerGist(short, 80, count, 4)).toEqual({ text: short, leftOut: 0 });
    const long = sentences(40);
    expect(answerGist(long, 0, count, 4)).toEqual({ text: long, leftOut: 0 });
  });

  test("a long answer keeps its first and last sentences whole, within the cap, and says how to get the rest", () => {
    const answer = `${sentences(12)}\n\n${sentences(12, 13)}`;
    const total = count(answer);
    const gist = answerGist(answer, 80, count, 12);
    expect(count(gist.text)).toBeLessThanOrEqual(80);
    expect(gist.text.startsWith("Sentence 1 says")).toBe(true);
    expect(gist.text.endsWith("Sentence 24 says the cache for shard 24 keeps its keys for 168 seconds.")).toBe(true);
    // Only whole sentences: every kept one ends where the answer's does.
    for (const line of gist.text.split("\n").filter((l) => !l.startsWith("[…"))) expect(answer).toContain(line);
    const marker = /\[… (\d+) more tokens: recall_turn 12\]/.exec(gist.text);
    expect(marker).not.toBeNull();
    expect(gist.leftOut).toBe(Number(marker?.[1]));
    expect(gist.leftOut).toBeGreaterThan(total / 2);
    expect(gist.leftOut).toBeLessThan(total);
  });

  test("the same answer gives the same bytes (a window turn renders alike on every request)", () => {
    const answer = sentences(30);
    expect(answerGist(answer, 80, count, 3).text).toBe(answerGist(answer, 80, count, 3).text);
  });

  test("a cut inside a code block closes the fence, and a close that starts inside one reopens it", () => {
    const code = Array.from({ length: 40 }, (_, i) => `  const v${i} = compute(${i}, "shard-${i}");`).join("\n");
    const answer = `Here is the fix for the parser.\n\n\`\`\`ts\nfunction parse(a: string) {\n${code}\n  return v39;\n}\n\`\`\``;
    const gist = answerGist(answer, 80, count, 9);
    expect(count(gist.text)).toBeLessThanOrEqual(80);
    const fences = gist.text.split("\n").filter((l) => l.startsWith("```"));
    // Opened and closed before the marker; reopened (with its language) and closed after it.
    expect(fences).toEqual(["```ts", "```", "```ts", "```"]);
    const [before, after] = gist.text.split(/\n\[… \d+ more tokens: recall_turn 9\]\n/);
    expect(before?.endsWith("```")).toBe(true);
    expect(after?.startsWith("```ts")).toBe(true);
  });

  test("one sentence longer than the cap is cut at a word, not mid-word", () => {
    const words = Array.from({ length: 400 }, (_, i) => `word${i}`).join(" ");
    const gist = answerGist(`${words}.`, 60, count, 2);
    expect(count(gist.text)).toBeLessThanOrEqual(60);
    const head = gist.text.split("\n")[0] ?? "";
    expect(head.startsWith("word0 word1")).toBe(true);
    expect(/word\d+$/.test(head)).toBe(true);
    expect(`${words}.`.startsWith(head)).toBe(true);
    expect(gist.text).toContain("recall_turn 2");
  });
});
