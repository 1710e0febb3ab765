import { afterAll, describe, expect, test } from "bun:test";
import { truncateHeadTail } from "../../src/tools/truncate.ts";
import { call, makeWorkspace, registryFor, removeWorkspaces } from "./temp-workspace.ts";

afterAll(removeWorkspaces);

const numbered = (n: number): string => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join("\n");

describe("truncateHeadTail", () => {
  test("leaves text within the cap untouched", () => {
    expect(truncateHeadTail("short", 100)).toEqual({ text: "short", cutBytes: 0, cutLines: 0 });
  });

  test("keeps whole head and tail lines within the byte bound and says how much was cut", () => {
    const text = numbered(1000);
    const cut = truncateHeadTail(text, 400);
    expect(Buffer.byteLength(cut.text)).toBeLessThanOrEqual(400);
    expect(cut.text.startsWith("line 1\nline 2\n")).toBe(true);
    expect(cut.text.endsWith("line 999\nline 1000")).toBe(true);
    const kept = cut.text.split("\n").filter((l) => l.startsWith("line ")).length;
    expect(cut.cutLines).toBe(1000 - kept);
    expect(cut.text).toContain(`[… ${cut.cutBytes} bytes (${cut.cutLines} lines) cut from the middle of this output`);
    expect(cut.cutBytes).toBe(Buffer.byteLength(text) - Buffer.byteLength(cut.text.split("\n").filter((l) => l.startsWith("line ")).join("\n")));
  });

  test("uses exact token counts when a counter is given (fewer cuts than the byte bound)", () => {
    const text = numbered(1000);
    // A fake counter: one token per 4 bytes, rounded up.
    const count = (s: string): number => Math.ceil(Buffer.byteLength(s) / 4);
    const byTokens = truncateHeadTail(text, 400, count);
    expect(count(byTokens.text)).toBeLessThanOrEqual(400);
    expect(byTokens.cutLines).toBeLessThan(truncateHeadTail(text, 400).cutLines);
  });

  test("cuts the middle of a single long line", () => {
    const text = "a".repeat(500) + "b".repeat(500);
    const cut = truncateHeadTail(text, 300);
    expect(Buffer.byteLength(cut.text)).toBeLessThanOrEqual(300);
    expect(cut.text.startsWith("aaa")).toBe(true);
    expect(cut.text.endsWith("bbb")).toBe(true);
    expect(cut.cutBytes).toBeGreaterThan(700);
  });
});

describe("truncateHeadTail on outputs far over the cap (issue 9)", () => {
  /** A counter that records the longest string it was asked to count. */
  function spyCounter(): { count: (s: string) => number; longest: () => number } {
    let longest = 0;
    return {
      count: (s) => {
        longest = Math.max(longest, Buffer.byteLength(s));
        return Math.ceil(Buffer.byteLength(s) / 4);
      },
      longest: () => longest,
    };
  }

  test("a 5 MB single line is cut by bytes first: nothing near its size is counted", () => {
    const text = `${"x".repeat(2_500_000)}${"y".repeat(2_500_000)}`;
    const spy = spyCounter();
    const cut = truncateHeadTail(text, 2000, spy.count);
    expect(spy.longest()).toBeLessThanOrEqual(2000 * 8);
    expect(spy.count(cut.text)).toBeLessThanOrEqual(2000);
    expect(cut.text.startsWith("xxx")).toBe(true);
    expect(cut.text.endsWith("yyy")).toBe(true);
    expect(cut.cutBytes).toBeGreaterThan(4_990_000);
  });

  test("5 MB of ordinary lines: lines are still picked by tokens, the whole is never counted", () => {
    const text = numbered(500_000);
    const spy = spyCounter();
    const cut = truncateHeadTail(text, 2000, spy.count);
    expect(spy.longest()).toBeLessThanOrEqual(2000 * 8);
    expect(spy.count(cut.text)).toBeLessThanOrEqual(2000);
    // Token costs keep ~4× what the byte bound would.
    expect(cut.cutLines).toBeLessThan(truncateHeadTail(text, 2000).cutLines);
    expect(cut.text.endsWith("line 500000")).toBe(true);
  });
});

describe("central truncation in the registry", () => {
  test("caps forModel to settings.toolOutputTokens; raw keeps everything", async () => {
    const root = makeWorkspace({ "big.txt": `${numbered(2000)}\n` });
    const registry = registryFor(root, { settings: { approvals: "full-auto", toolOutputTokens: 500, shellTimeoutMs: 10_000 }, countTokens: () => undefined });
    const outcome = await call(registry, "read_file", { path: "big.txt" });
    expect(Buffer.byteLength(outcome.forModel)).toBeLessThanOrEqual(500);
    expect(outcome.truncated?.cutLines).toBeGreaterThan(1900);
    expect(outcome.forModel).toContain("cut from the middle of this output");
    expect(outcome.raw.split("\n")).toHaveLength(2000);
    expect(outcome.raw).toContain("1000\tline 1000");
  });
});
