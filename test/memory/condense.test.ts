import { describe, expect, test } from "bun:test";
import { ARGUMENT_KEEP_CHARS, condensedTurnText, condenseToolArguments, SETTLED_ANSWER_CHARS } from "../../src/memory/condense.ts";
import type { Turn } from "../../src/memory/turn.ts";

describe("condenseToolArguments", () => {
  test("short arguments are kept byte for byte", () => {
    const args = JSON.stringify({ path: "src/a.ts", old_string: "a", new_string: "b" });
    expect(condenseToolArguments(args)).toBe(args);
  });

  test("a long string (a whole file for write_file) keeps its head and says how much was left out", () => {
    const content = Array.from({ length: 200 }, (_, i) => `line ${i}`).join("\n");
    const out = JSON.parse(condenseToolArguments(JSON.stringify({ path: "src/big.ts", content })));
    expect(out.path).toBe("src/big.ts");
    expect(out.content.length).toBeLessThan(ARGUMENT_KEEP_CHARS);
    expect(out.content).toStartWith("line 0\nline 1");
    expect(out.content).toContain(`[${content.length} characters, 200 lines in all; not repeated]`);
  });

  test("unparsable JSON is cut as text", () => {
    const broken = `{"path": "x", ${"y".repeat(500)}`;
    expect(condenseToolArguments(broken)).toBe(`${broken.slice(0, ARGUMENT_KEEP_CHARS)}…`);
  });
});

describe("condensedTurnText", () => {
  const turn = (items: Turn["items"], extra: Partial<Turn> = {}): Turn => ({ turn: 3, user: "Fix the bug in src/a.ts", items, ...extra });

  test("names each tool call with its target; results only for failures; the answer cut at a sentence", () => {
    const answer = `${"The fix is in place. ".repeat(30)}Done.`;
    const text = condensedTurnText(
      turn([
        { kind: "tool", callId: "1", name: "read_file", arguments: JSON.stringify({ path: "src/a.ts" }), output: "Read src/a.ts: 40 lines", isError: false },
        { kind: "tool", callId: "2", name: "run_shell", arguments: JSON.stringify({ command: "bun test" }), output: "exit 1: 2 failing", isError: true },
        { kind: "assistant", text: answer },
      ]),
    );
    expect(text.user).toBe("Fix the bug in src/a.ts");
    expect(text.assistant).toContain("- read_file src/a.ts\n");
    expect(text.assistant).not.toContain("40 lines");
    expect(text.assistant).toContain("- run_shell bun test (failed): exit 1: 2 failing");
    expect(text.assistant).toContain("The fix is in place.");
    expect(text.assistant).toMatch(/\[…\d+ more characters\]$/);
    expect(text.assistant.length).toBeLessThan(SETTLED_ANSWER_CHARS + 200);
  });

  test("an unfinished turn says how it ended; a turn without an answer says so", () => {
    expect(condensedTurnText(turn([], { stopReason: "aborted" })).assistant).toBe("[turn ended: aborted]");
    expect(condensedTurnText(turn([])).assistant).toBe("[no answer]");
  });

  test("is deterministic: the same turn condenses to the same bytes (the cached prefix holds)", () => {
    const t = turn([{ kind: "assistant", text: "Answer. ".repeat(100) }]);
    expect(condensedTurnText(t)).toEqual(condensedTurnText(structuredClone(t)));
  });
});
