import { describe, expect, test } from "bun:test";
import type { EarlierTurn } from "../../../src/agent/front-end-contract.ts";
import { earlierItems } from "../../../src/ui/transcript/earlier-items.ts";

const turn = (n: number, extra: Partial<EarlierTurn> = {}): EarlierTurn => ({ turn: n, user: `question ${n}`, steps: [{ kind: "text", text: `answer ${n}` }], stopReason: "completed", ...extra });

describe("earlierItems", () => {
  test("nothing for a new session", () => {
    expect(earlierItems({ turns: [], total: 0 }, "s1")).toEqual([]);
  });

  test("a first line, then each turn as it was shown live", () => {
    const items = earlierItems(
      {
        turns: [
          turn(1, {
            steps: [
              { kind: "tool", callId: "c1", name: "run_shell", target: "run npm test", summary: "exit 1\nFAIL a.test.ts\nFAIL b.test.ts", isError: true, denied: false },
              { kind: "text", text: "Two tests fail.\n" },
            ],
          }),
          turn(2, { stopReason: "aborted", undone: true }),
          turn(3, { stopReason: undefined, steps: [] }),
        ],
        total: 3,
      },
      "s1",
    );
    expect(items).toEqual([
      { kind: "notice", tone: "info", text: "session s1 resumed: 3 earlier turn(s) below" },
      { kind: "user", text: "question 1" },
      { kind: "tool", tool: { callId: "c1", name: "run_shell", target: "run npm test", status: "error", summary: "exit 1 (+2 more lines)" } },
      { kind: "markdown", source: "Two tests fail.", gapBefore: true },
      { kind: "user", text: "question 2" },
      { kind: "markdown", source: "answer 2", gapBefore: false },
      { kind: "turn_stop", reason: "aborted" },
      { kind: "notice", tone: "info", text: "/undo gave back the files turn 2 changed" },
      { kind: "user", text: "question 3" },
      // Never closed in the transcript: closed as failed when resumed.
      { kind: "turn_stop", reason: "error" },
    ]);
  });

  test("only the newest turns that fit the line limit, and the whole session's size", () => {
    const long = (n: number) => turn(n, { steps: [{ kind: "text", text: Array.from({ length: 40 }, (_, i) => `line ${i}`).join("\n") }] });
    const items = earlierItems({ turns: [long(8), long(9), long(10)], total: 10 }, "s1", 80, 100);
    expect(items[0]).toEqual({ kind: "notice", tone: "info", text: "session s1 resumed: 10 earlier turn(s), the last 2 below; 'valarmind sessions show s1' prints them all" });
    expect(items.filter((item) => item.kind === "user").map((item) => (item.kind === "user" ? item.text : ""))).toEqual(["question 9", "question 10"]);
  });

  test("a newest turn taller than the limit alone keeps the tail of its answer, and says what was left out", () => {
    // Was: a 20,000-line last answer was printed whole (6.6 s before the prompt).
    const huge = turn(1, { steps: [{ kind: "tool", callId: "c", name: "read_file", target: "a", summary: "x", isError: false, denied: false }, { kind: "text", text: Array.from({ length: 500 }, (_, i) => `line ${i}`).join("\n") }] });
    const items = earlierItems({ turns: [turn(0), huge], total: 2 }, "s1", 80, 100);
    expect(items.filter((item) => item.kind === "user")).toHaveLength(1);
    expect(items[0]?.kind === "notice" && items[0].text).toContain("the last 1 below");
    const answer = items.find((item) => item.kind === "markdown");
    const lines = answer?.kind === "markdown" ? answer.source.split("\n") : [];
    expect(lines.at(-1)).toBe("line 499");
    expect(lines.length).toBeLessThan(100);
    expect(items.some((item) => item.kind === "notice" && /line\(s\) of the answer and 1 earlier item\(s\) of the turn not printed again/.test(item.text))).toBe(true);
  });

  test("rows are counted at the terminal's width: long lines wrap", () => {
    // Was: 40 answers of one 4,000-character line each counted as 40 lines and printed ~2,000 rows.
    const wide = (n: number) => turn(n, { steps: [{ kind: "text", text: "y".repeat(4000) }] });
    const items = earlierItems({ turns: Array.from({ length: 40 }, (_, i) => wide(i + 1)), total: 40 }, "s1", 80, 1000);
    expect(items.filter((item) => item.kind === "user").length).toBeLessThanOrEqual(20);
  });

  test("the message as typed, with what it carried named, and a long one cut to its first lines", () => {
    const items = earlierItems({ turns: [turn(1, { user: Array.from({ length: 30 }, (_, i) => `log ${i}`).join("\n"), added: ["README.md attached", "standard input"] })], total: 1 }, "s1");
    const user = items.find((item) => item.kind === "user");
    expect(user?.kind === "user" && user.text).toBe(`${Array.from({ length: 10 }, (_, i) => `log ${i}`).join("\n")}\n… 20 more line(s)\n(+ README.md attached, standard input)`);
  });
});
