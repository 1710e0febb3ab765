import { describe, expect, test } from "bun:test";
import { ARGUMENT_KEEP_CHARS, condenseToolArguments } from "../../src/memory/condense.ts";

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
