import { afterAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createReadFileTool } from "../../src/tools/read-file.ts";
import { call, makeWorkspace, registryFor, removeWorkspaces } from "./temp-workspace.ts";

afterAll(removeWorkspaces);

const lines = (n: number): string => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join("\n") + "\n";

describe("read_file", () => {
  test("returns numbered lines, whole file by default", async () => {
    const root = makeWorkspace({ "a.txt": "alpha\nbeta\n" });
    const outcome = await call(registryFor(root), "read_file", { path: "a.txt" });
    expect(outcome.isError).toBe(false);
    expect(outcome.forModel).toBe("1\talpha\n2\tbeta");
    expect(outcome.summary).toBe("read a.txt (2 lines)");
  });

  test("reads a line range with padded numbers and says how to continue", async () => {
    const root = makeWorkspace({ "long.txt": lines(120) });
    const outcome = await call(registryFor(root), "read_file", { path: "long.txt", start_line: 9, end_line: 11 });
    expect(outcome.forModel).toBe(" 9\tline 9\n10\tline 10\n11\tline 11\n(showing lines 9-11 of 120; call read_file with start_line 12 to continue)");
    expect(outcome.summary).toBe("read long.txt (lines 9-11 of 120)");
  });

  test("caps the default window at maxLines and cuts very long lines", async () => {
    const root = makeWorkspace({ "long.txt": lines(50), "wide.txt": `${"x".repeat(30)}\n` });
    const tool = createReadFileTool({ maxBytes: 1_000_000, maxLines: 10, maxLineChars: 20 });
    const registry = registryFor(root, { tools: [tool] });
    const long = await call(registry, "read_file", { path: "long.txt" });
    expect(long.forModel.split("\n")).toHaveLength(11);
    expect(long.forModel).toContain("(showing lines 1-10 of 50; call read_file with start_line 11 to continue)");
    const wide = await call(registry, "read_file", { path: "wide.txt" });
    expect(wide.forModel).toBe(`1\t${"x".repeat(20)} [… line cut: 10 more characters; run_shell with cut -c shows the rest]`);
  });

  test("refuses binary files, directories, missing files and files over the size cap", async () => {
    const root = makeWorkspace({ "dir/x.txt": "x", "big.txt": "y".repeat(200) });
    writeFileSync(join(root, "img.bin"), Buffer.from([0x89, 0x50, 0x00, 0x01, 0x02]));
    const registry = registryFor(root, { tools: [createReadFileTool({ maxBytes: 100, maxLines: 10, maxLineChars: 100 })] });
    const binary = await call(registry, "read_file", { path: "img.bin" });
    expect(binary.isError).toBe(true);
    expect(binary.forModel).toMatch(/img\.bin is a binary file \(5 bytes\)/);
    expect((await call(registry, "read_file", { path: "dir" })).forModel).toMatch(/is a directory; use list_files/);
    expect((await call(registry, "read_file", { path: "nope.txt" })).forModel).toMatch(/nope\.txt does not exist/);
    expect((await call(registry, "read_file", { path: "big.txt" })).forModel).toMatch(/200 bytes, over the 100-byte cap/);
  });

  test("reports a range past the end or reversed, and an empty file", async () => {
    const root = makeWorkspace({ "a.txt": "one\ntwo\n", "empty.txt": "" });
    const registry = registryFor(root);
    expect((await call(registry, "read_file", { path: "a.txt", start_line: 5 })).forModel).toMatch(/start_line 5 is past the end of a\.txt, which has 2 lines/);
    expect((await call(registry, "read_file", { path: "a.txt", start_line: 2, end_line: 1 })).forModel).toMatch(/end_line 1 is before start_line 2/);
    expect((await call(registry, "read_file", { path: "empty.txt" })).forModel).toBe("(empty.txt is empty)");
  });

  test("handles CRLF files without stray carriage returns", async () => {
    const root = makeWorkspace({ "crlf.txt": "a\r\nb\r\n" });
    expect((await call(registryFor(root), "read_file", { path: "crlf.txt" })).forModel).toBe("1\ta\n2\tb");
  });
});
