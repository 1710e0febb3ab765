/**
 * The pieces behind run_shell's bounded output (issue 9): the in-memory head+tail capture (counts,
 * copies, character boundaries, long lines) and the on-disk spool (private, capped, never through
 * a planted symlink). Real processes and the real sandbox are in test/security/shell-output.test.ts.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { countNewlines, cutLongLines, HeadTailCapture } from "../../src/tools/shell-output-capture.ts";
import { ShellOutputSpool, spoolFileName } from "../../src/tools/shell-output-spool.ts";
import { makeWorkspace, removeWorkspaces } from "./temp-workspace.ts";

afterAll(removeWorkspaces);

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

describe("HeadTailCapture", () => {
  test("small output is kept whole, with its byte and line counts", () => {
    const capture = new HeadTailCapture(8, 8);
    capture.push(bytes("one\ntwo\n"));
    capture.push(bytes("three"));
    expect(capture.result()).toEqual({ bytes: 13, lines: 3, head: "one\ntwo\nthree", tail: "", droppedBytes: 0, droppedLines: 0 });
  });

  test("a long output keeps its first and last bytes and counts what lies between", () => {
    const capture = new HeadTailCapture(6, 6);
    const text = Array.from({ length: 100 }, (_, i) => `${i}`).join("\n") + "\n";
    for (let at = 0; at < text.length; at += 7) capture.push(bytes(text.slice(at, at + 7)));
    const result = capture.result();
    expect(result.bytes).toBe(text.length);
    expect(result.lines).toBe(100);
    expect(result.head).toBe("0\n1\n2\n");
    expect(result.tail).toBe("98\n99\n");
    expect(result.droppedBytes).toBe(text.length - 6 - 6);
    expect(result.droppedLines).toBe(100 - 3 - 2);
  });

  test("bytes are copied out of each chunk: changing or reusing a chunk later changes nothing", () => {
    const capture = new HeadTailCapture(4, 4);
    const chunk = bytes("abcdefghij");
    capture.push(chunk);
    chunk.fill(0x7a);
    const result = capture.result();
    expect(result.head).toBe("abcd");
    expect(result.tail).toBe("ghij");
  });

  test("a cut never splits a character, and counts the bytes it leaves out", () => {
    const capture = new HeadTailCapture(5, 5);
    capture.push(bytes("ééééééééé")); // 18 bytes, 2 each
    const result = capture.result();
    expect(result.head).toBe("éé");
    expect(result.tail).toBe("éé");
    expect(result.droppedBytes).toBe(18 - 8);
  });

  test("one huge line shows only its first and last half-line around the gap", () => {
    const capture = new HeadTailCapture(4096, 4096);
    const line = bytes("a".repeat(100_000));
    capture.push(line);
    const result = capture.result(100);
    expect(result.head).toBe("a".repeat(50));
    expect(result.tail).toBe("a".repeat(50));
    expect(result.droppedBytes).toBe(100_000 - 100);
    expect(result.lines).toBe(1);
    expect(result.droppedLines).toBe(0);
  });
});

describe("line helpers", () => {
  test("countNewlines agrees on sparse and dense text", () => {
    expect(countNewlines(bytes("a\nb\nc"))).toBe(2);
    expect(countNewlines(bytes("y\n".repeat(10_000)))).toBe(10_000);
    expect(countNewlines(bytes(`${"x".repeat(60)}\n`.repeat(1000)))).toBe(1000);
    // Past one 64 KiB counting piece, with bytes above and below the newline's value.
    expect(countNewlines(bytes("\t\né\n\u0001".repeat(50_000)))).toBe(100_000);
    expect(countNewlines(bytes("a\nb\nc\n"), 3)).toBe(1);
  });

  test("a reused read buffer: push and write take only the given length and keep no reference", () => {
    const root = makeWorkspace();
    const capture = new HeadTailCapture(4, 4);
    const spool = new ShellOutputSpool(join(root, "outputs"), "reuse", { maxBytes: 1024, keepAboveBytes: 4 });
    const buffer = Buffer.alloc(16);
    for (const piece of ["ab\n", "cdef\n", "gh"]) {
      buffer.fill(0x7a);
      buffer.write(piece);
      capture.push(buffer, piece.length);
      spool.write(buffer, piece.length);
    }
    buffer.fill(0x7a);
    expect(capture.result()).toEqual({ bytes: 10, lines: 3, head: "ab\nc", tail: "f\ngh", droppedBytes: 2, droppedLines: 0 });
    const report = spool.finish();
    expect(report.kind).toBe("kept");
    if (report.kind === "kept") expect(readFileSync(report.path, "utf8")).toBe("ab\ncdef\ngh");
  });

  test("cutLongLines keeps short lines and halves long ones with a marker", () => {
    const text = `short\n${"b".repeat(30)}${"c".repeat(30)}\nend`;
    expect(cutLongLines(text, 20)).toBe(`short\n${"b".repeat(10)}[… 40 characters of this line not shown …]${"c".repeat(10)}\nend`);
  });
});

describe("ShellOutputSpool", () => {
  test("small output writes no file", () => {
    const dir = join(makeWorkspace(), "outputs");
    const spool = new ShellOutputSpool(dir, "call_1", { maxBytes: 1000, keepAboveBytes: 10 });
    spool.write(bytes("hello"));
    expect(spool.finish()).toEqual({ kind: "none" });
    expect(existsSync(dir)).toBe(false);
  });

  test("larger output goes to a private file, capped on disk, the rest counted", () => {
    const dir = join(makeWorkspace(), "sessions", "s1", "outputs");
    const spool = new ShellOutputSpool(dir, "call_2", { maxBytes: 20, keepAboveBytes: 4 });
    spool.write(bytes("abc"));
    spool.write(bytes("defghijklmnopqrstuvwxyz0123456789"));
    const report = spool.finish();
    expect(report).toEqual({ kind: "kept", path: join(dir, "call_2.log"), keptBytes: 20, totalBytes: 36 });
    expect(readFileSync(join(dir, "call_2.log"), "utf8")).toBe("abcdefghijklmnopqrst");
    expect(statSync(join(dir, "call_2.log")).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
  });

  test("a call id is made a safe file name; an existing file or planted symlink is never written through", () => {
    expect(spoolFileName("../../etc/passwd", 0)).toBe("______etc_passwd.log");
    const root = makeWorkspace();
    const dir = join(root, "outputs");
    const victim = join(root, "victim.txt");
    writeFileSync(victim, "untouched");
    new ShellOutputSpool(dir, "seed", { maxBytes: 100, keepAboveBytes: 0 }).finish();
    const first = new ShellOutputSpool(dir, "c", { maxBytes: 100, keepAboveBytes: 0 });
    first.write(bytes("x"));
    first.finish();
    symlinkSync(victim, join(dir, "c-1.log"));
    const second = new ShellOutputSpool(dir, "c", { maxBytes: 100, keepAboveBytes: 0 });
    second.write(bytes("second"));
    expect(second.finish()).toEqual({ kind: "kept", path: join(dir, "c-2.log"), keptBytes: 6, totalBytes: 6 });
    expect(readFileSync(victim, "utf8")).toBe("untouched");
  });

  test("a directory that cannot be made is reported, not thrown", () => {
    const root = makeWorkspace({ "blocker": "a file where the directory should be" });
    const spool = new ShellOutputSpool(join(root, "blocker", "outputs"), "c", { maxBytes: 100, keepAboveBytes: 0 });
    spool.write(bytes("data"));
    const report = spool.finish();
    expect(report.kind).toBe("failed");
  });
});
