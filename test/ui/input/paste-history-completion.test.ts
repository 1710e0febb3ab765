import { describe, expect, test } from "bun:test";
import { applyCompletion, completionContext, filterCommands } from "../../../src/ui/input/completion.ts";
import { addChip, chipEndingAt, expandChips, shouldChip } from "../../../src/ui/input/paste-chips.ts";
import { historyCursor, historyNext, historyPrevious, historyPush } from "../../../src/ui/input/prompt-history.ts";

describe("paste chips", () => {
  test("a large paste becomes a chip that expands back on send", () => {
    const text = Array.from({ length: 120 }, (_, i) => `line ${i}`).join("\n");
    expect(shouldChip(text)).toBe(true);
    expect(shouldChip("short\npaste")).toBe(false);
    const first = addChip(text, new Map());
    expect(first.label).toBe("[pasted 120 lines]");
    const second = addChip(text, first.store);
    expect(second.label).toBe("[pasted 120 lines #2]");
    expect(expandChips(`see ${first.label} please`, first.store)).toBe(`see ${text} please`);
    expect(chipEndingAt(`x ${first.label}`, 2 + first.label.length, first.store)).toBe(first.label);
  });
});

describe("history", () => {
  test("up walks back, down returns to the draft", () => {
    let cursor = historyCursor(["one", "two"]);
    const up1 = historyPrevious(cursor, "draft");
    expect(up1?.text).toBe("two");
    const up2 = historyPrevious(up1?.cursor ?? cursor, "two");
    expect(up2?.text).toBe("one");
    expect(historyPrevious(up2?.cursor ?? cursor, "one")).toBeUndefined();
    const down1 = historyNext(up2?.cursor ?? cursor);
    const down2 = historyNext(down1?.cursor ?? cursor);
    expect([down1?.text, down2?.text]).toEqual(["two", "draft"]);
    cursor = historyPush(cursor, "two");
    expect(cursor.entries).toEqual(["one", "two"]);
    expect(historyPush(cursor, "three").entries).toEqual(["one", "two", "three"]);
  });
});

describe("completion", () => {
  test("a leading slash completes commands; @ completes paths anywhere", () => {
    expect(completionContext({ text: "/he", cursor: 3 })).toEqual({ kind: "command", query: "he", start: 1, end: 3 });
    expect(completionContext({ text: "/help me", cursor: 8 })).toBeUndefined();
    expect(completionContext({ text: "look at @src/a", cursor: 14 })).toEqual({
      kind: "path",
      query: "src/a",
      start: 9,
      end: 14,
    });
    expect(completionContext({ text: "mail a@b", cursor: 8 })).toBeUndefined();
  });

  test("accepting replaces the query; directories keep the word open", () => {
    const buffer = { text: "read @sr now", cursor: 8 };
    const context = completionContext(buffer);
    if (!context) throw new Error("expected a path context");
    expect(applyCompletion(buffer, context, "src/a.ts")).toEqual({ text: "read @src/a.ts now", cursor: 15 });
    expect(applyCompletion(buffer, context, "src/")).toEqual({ text: "read @src/ now", cursor: 10 });
  });

  test("commands filter by prefix", () => {
    const commands = [
      { name: "compact", usage: "/compact", description: "", runs: "core" as const },
      { name: "clear", usage: "/clear", description: "", runs: "core" as const },
      { name: "goal", usage: "/goal TEXT", description: "", runs: "core" as const },
    ];
    expect(filterCommands(commands, "c").map((item) => item.value)).toEqual(["compact", "clear"]);
  });
});
