/**
 * Tools state their own facts (src/tools/define-tool.ts): a tool made with `defineTool` gets its
 * kind, locations and working-set priority recorded on every outcome, and memory (touched files,
 * the working set, stale reads, summaries) reads them without knowing the tool's name.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Type } from "@sinclair/typebox";
import { toolMemory } from "../../src/memory/tool-memory.ts";
import { recordTurnInMemory } from "../../src/memory/turn-memory.ts";
import { ShortTermMemory } from "../../src/memory/short-term.ts";
import { ExtractiveSummarizer } from "../../src/memory/summary.ts";
import { toolTarget } from "../../src/memory/summary.ts";
import type { ToolExchange } from "../../src/memory/turn.ts";
import { defineTool, Nullable } from "../../src/tools/define-tool.ts";
import { createReadFileTool } from "../../src/tools/read-file.ts";
import { toolSpecs } from "../../src/tools/registry.ts";
import type { ToolCallOutcome } from "../../src/tools/types.ts";
import { makeWorkspace, registryFor, removeWorkspaces } from "./temp-workspace.ts";

afterAll(removeWorkspaces);

const memoryOptions = { shortBufferTurns: 20, windowBlockTurns: 5, workingSetTokens: 50_000, overflowPolicy: "priority" as const, countTokens: (t: string) => t.length };

// A tool no memory code has heard of: it reads one file and writes another.
const CopyParams = Type.Object(
  { from: Type.String({ minLength: 1 }), to: Type.String({ minLength: 1 }), note: Type.Optional(Nullable(Type.String())) },
  { additionalProperties: false },
);
const copyTool = defineTool({
  name: "copy_notes",
  description: "copies a file's text (a test tool)",
  kind: "write",
  parameters: CopyParams,
  locations: (args) => [
    { path: args.from, access: "read" },
    { path: args.to, access: "write" },
  ],
  workingSetPriority: 0.45,
  describe: (args) => `copy ${args.from} to ${args.to}`,
  execute: async (args) => ({ forModel: `${args.from}:\n${"line of text\n".repeat(80)}`, summary: `copied ${args.from}`, isError: false }),
});
// One that only reads, with an output worth keeping.
const peekTool = defineTool({
  name: "peek_notes",
  description: "shows a file's text (a test tool)",
  kind: "read",
  parameters: Type.Object({ file: Type.String() }, { additionalProperties: false }),
  pathArgs: ["file"],
  workingSetPriority: 0.55,
  describe: (args) => `peek ${args.file}`,
  execute: async (args) => ({ forModel: `${args.file}:\n${"notes body\n".repeat(80)}`, summary: `peeked ${args.file}`, isError: false }),
});

function exchange(name: string, args: object, outcome: ToolCallOutcome, callId: string): ToolExchange {
  return { kind: "tool", callId, name, arguments: JSON.stringify(args), output: outcome.forModel, isError: outcome.isError };
}

describe("a tool made with defineTool", () => {
  test("its facts are on the outcome: kind, normalized locations, working-set priority", async () => {
    const registry = registryFor(makeWorkspace({ "notes/a.md": "a\n" }), { tools: [copyTool, peekTool] });
    const outcome = await registry.run({ callId: "c1", name: "copy_notes", arguments: JSON.stringify({ from: "./notes/a.md", to: "notes//b.md", note: null }) }, { signal: new AbortController().signal });
    expect(outcome).toMatchObject({ kind: "write", workingSetPriority: 0.45, isError: false });
    expect(outcome.locations).toEqual([
      { path: "notes/a.md", access: "read" },
      { path: "notes/b.md", access: "write" },
    ]);
    // By default the locations are the path arguments, read unless the tool writes.
    const peek = await registry.run({ callId: "c2", name: "peek_notes", arguments: JSON.stringify({ file: "notes/a.md" }) }, { signal: new AbortController().signal });
    expect(peek.locations).toEqual([{ path: "notes/a.md", access: "read" }]);
  });

  test("invalid arguments and escaping paths touch nothing", async () => {
    const registry = registryFor(makeWorkspace(), { tools: [peekTool] });
    const signal = new AbortController().signal;
    const invalid = await registry.run({ callId: "c1", name: "peek_notes", arguments: JSON.stringify({ file: 3 }) }, { signal });
    expect(invalid).toMatchObject({ kind: "read", isError: true, locations: [] });
    const escaping = await registry.run({ callId: "c2", name: "peek_notes", arguments: JSON.stringify({ file: "../../etc/passwd" }) }, { signal });
    expect(escaping).toMatchObject({ isError: true, locations: [] });
    const unknown = await registry.run({ callId: "c3", name: "nope", arguments: "{}" }, { signal });
    expect(unknown.kind).toBeUndefined();
    expect(unknown.locations).toEqual([]);
  });

  test("memory sees its files: its output enters the working set when its turn folds, its write makes an earlier read stale, touched files count both", async () => {
    const registry = registryFor(makeWorkspace({ "notes/a.md": "a\n" }), { tools: [copyTool, peekTool] });
    const signal = new AbortController().signal;
    const memory = new ShortTermMemory(memoryOptions);
    memory.workingSet.setTurn(1);

    const peekArgs = { file: "notes/b.md" };
    const peek = await registry.run({ callId: "p1", name: "peek_notes", arguments: JSON.stringify(peekArgs) }, { signal });
    const peekMemory = toolMemory({ callId: "p1", name: "peek_notes", arguments: JSON.stringify(peekArgs) }, peek);
    expect(peekMemory.workingSetItem).toMatchObject({ priority: 0.55, tags: ["notes/b.md"] });
    recordTurnInMemory(memory, { turn: 1, user: "look", items: [exchange("peek_notes", peekArgs, peek, "p1")] }, new Map([["p1", peekMemory]]), { ttlTurns: 10 });
    // Held back while its turn is in the window (ADR 0074).
    expect(memory.workingSet.items()).toEqual([]);

    memory.workingSet.setTurn(2);
    const copyArgs = { from: "notes/a.md", to: "./notes/b.md" };
    const copy = await registry.run({ callId: "k1", name: "copy_notes", arguments: JSON.stringify(copyArgs) }, { signal });
    const copyMemory = toolMemory({ callId: "k1", name: "copy_notes", arguments: JSON.stringify(copyArgs) }, copy);
    recordTurnInMemory(memory, { turn: 2, user: "copy", items: [exchange("copy_notes", copyArgs, copy, "k1")] }, new Map([["k1", copyMemory]]), { ttlTurns: 10 });
    await memory.slide(new ExtractiveSummarizer(), undefined, (turns) => ({ fold: turns.length, reason: "cost", rent: 0, cost: 0, why: "test" }));
    // notes/b.md was written: its earlier read never enters; the copy's own output (tagged a.md, b.md) does.
    expect(memory.workingSet.items().map((w) => w.tags)).toEqual([["notes/a.md", "notes/b.md"]]);
    expect(memory.touched.list("file").map((e) => [e.name, e.reads, e.edits])).toEqual([
      ["notes/b.md", 1, 1],
      ["notes/a.md", 1, 0],
    ]);
  });

  test("a recorded call (as on resume, with no outcome) gets the same facts by the tool's name", () => {
    registryFor(makeWorkspace(), { tools: [copyTool] });
    const memory = new ShortTermMemory(memoryOptions);
    memory.touched.observeToolCall("copy_notes", JSON.stringify({ from: "x.md", to: "y.md" }), 3);
    expect(memory.touched.list("file").map((e) => [e.name, e.reads, e.edits])).toEqual([
      ["y.md", 0, 1],
      ["x.md", 1, 0],
    ]);
    const call: ToolExchange = { kind: "tool", callId: "c", name: "copy_notes", arguments: JSON.stringify({ from: "x.md", to: "y.md" }), output: "", isError: false };
    expect(toolTarget(call)).toBe("x.md");
    // A default tool's facts are the tool's, whatever registry ran before.
    expect(toolTarget({ ...call, name: "read_file", arguments: JSON.stringify({ path: "./src/a.ts" }) })).toBe("src/a.ts");
    expect(toolTarget({ ...call, name: "run_shell", arguments: JSON.stringify({ command: "cat src/a.ts" }) })).toBeUndefined();
  });
});

describe("schemas from TypeBox", () => {
  test("the specs sent to the model are byte-identical to the hand-written schemas they replaced", () => {
    const before = readFileSync(join(import.meta.dir, "fixtures", "tool-specs.json"), "utf8").trim();
    expect(JSON.stringify(toolSpecs())).toBe(before);
  });

  test("a tool's lenient schema keeps type first and nullable optionals", () => {
    expect(JSON.stringify(createReadFileTool().parameters)).toBe(
      '{"type":"object","properties":{"path":{"type":"string","minLength":1,"description":"workspace-relative"},"start_line":{"type":["integer","null"],"minimum":1,"description":"1-based"},"end_line":{"type":["integer","null"],"minimum":1,"description":"inclusive"}},"required":["path"],"additionalProperties":false}',
    );
  });
});
