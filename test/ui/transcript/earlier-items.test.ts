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
    const items = earlierItems({ turns: [long(8), long(9), long(10)], total: 10 }, "s1", 100);
    expect(items[0]).toEqual({ kind: "notice", tone: "info", text: "session s1 resumed: 10 earlier turn(s), the last 2 below; 'valarmind sessions show s1' prints them all" });
    expect(items.filter((item) => item.kind === "user").map((item) => (item.kind === "user" ? item.text : ""))).toEqual(["question 9", "question 10"]);
  });

  test("the last turn is shown even when it alone is longer than the limit", () => {
    const huge = turn(1, { steps: [{ kind: "text", text: "x\n".repeat(500) }] });
    const items = earlierItems({ turns: [turn(0), huge], total: 2 }, "s1", 100);
    expect(items.filter((item) => item.kind === "user")).toHaveLength(1);
    expect(items[0]?.kind === "notice" && items[0].text).toContain("the last 1 below");
  });
});
