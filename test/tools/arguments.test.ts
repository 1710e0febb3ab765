import { afterAll, describe, expect, test } from "bun:test";
import { countTokens } from "../../src/tokens/tokenizer.ts";
import { toolSpecs } from "../../src/tools/registry.ts";
import { toStrictParameters } from "../../src/tools/strict-schema.ts";
import { call, makeWorkspace, registryFor, removeWorkspaces } from "./temp-workspace.ts";

afterAll(removeWorkspaces);

describe("argument validation", () => {
  const registry = () => registryFor(makeWorkspace({ "a.txt": "a\n" }));

  test("wrong type names the field, the expected type and what was sent", async () => {
    const outcome = await call(registry(), "read_file", { path: "a.txt", start_line: "10" });
    expect(outcome.isError).toBe(true);
    expect(outcome.forModel).toBe(
      'Invalid arguments for read_file: "start_line" must be integer or null (got "10"). Fix the arguments and call read_file again. Parameters: path (string, required), start_line (integer or null), end_line (integer or null).',
    );
    expect(outcome.summary).toBe("read_file: invalid arguments");
  });

  test("missing required, unknown, out-of-range and enum fields are each named", async () => {
    const r = registry();
    expect((await call(r, "edit_file", { path: "a.txt", old_string: "a" })).forModel).toContain('"new_string" is required but missing');
    expect((await call(r, "read_file", { path: "a.txt", lines: 3 })).forModel).toContain('"lines" is not a parameter of this tool');
    expect((await call(r, "read_file", { path: "a.txt", start_line: 0 })).forModel).toContain('"start_line" must be >= 1 (got 0)');
    expect((await call(r, "memory_task", { action: "remove" })).forModel).toContain('"action" must be one of "add", "update", "done", "block" (got "remove")');
    expect((await call(r, "read_file", { path: "" })).forModel).toContain('"path" must not be empty');
  });

  test("invalid JSON and non-object arguments are explained", async () => {
    const r = registry();
    const bad = await call(r, "read_file", '{"path": "a.txt"');
    expect(bad.forModel).toMatch(/^Invalid arguments for read_file: not valid JSON \(.+\); received "\{\\"path\\": \\"a\.txt\\"". Fix the arguments/);
    expect((await call(r, "read_file", "[1]")).forModel).toMatch(/expected a JSON object, received \[1\]/);
  });

  test("nulls (strict mode's 'not given') are accepted and treated as absent", async () => {
    const outcome = await call(registry(), "read_file", { path: "a.txt", start_line: null, end_line: null });
    expect(outcome.isError).toBe(false);
    expect(outcome.forModel).toBe("1\ta");
  });

  test("an unknown tool lists the available ones", async () => {
    const outcome = await call(registry(), "delete_everything", {});
    expect(outcome.isError).toBe(true);
    expect(outcome.forModel).toMatch(/^Error: there is no tool named "delete_everything"\. Available tools: read_file, list_files, grep, /);
  });
});

describe("tool specs", () => {
  test("toolSpecs() works offline, lists every tool once in a stable order, all strict", () => {
    const specs = toolSpecs();
    expect(specs.map((s) => s.name)).toEqual([
      "read_file",
      "list_files",
      "grep",
      "edit_file",
      "write_file",
      "run_shell",
      "memory_set_goal",
      "memory_set_now",
      "memory_task",
      "memory_record_decision",
      "memory_set_convention",
      "recall_turn",
    ]);
    for (const spec of specs) {
      expect(spec.strict).toBe(true);
      expect(spec.description.length).toBeGreaterThan(40);
      const params = spec.parameters as { properties: Record<string, unknown>; required: string[]; additionalProperties: boolean };
      expect(params.additionalProperties).toBe(false);
      expect([...params.required].sort()).toEqual(Object.keys(params.properties).sort());
      expect(JSON.stringify(params)).not.toContain("minLength");
    }
    expect(JSON.stringify(toolSpecs())).toBe(JSON.stringify(specs));
  });

  // The definitions ride on every request; this budget keeps them from growing back (was 2,412;
  // 1,400 until recall_turn, ~80 tokens, came with answer gists: ADR 0087).
  test("the tool definitions together stay within 1,460 o200k tokens", async () => {
    let total = 0;
    for (const spec of toolSpecs()) total += await countTokens(JSON.stringify(spec));
    expect(total).toBeLessThanOrEqual(1460);
  });

  test("a registry's specs equal the offline specs", () => {
    expect(JSON.stringify(registryFor(makeWorkspace()).specs())).toBe(JSON.stringify(toolSpecs({ shellTimeoutMs: 10_000 })));
  });

  test("a schema with an optional non-nullable parameter cannot be strict", () => {
    const schema = { type: "object", properties: { a: { type: "string" } }, required: [], additionalProperties: false };
    expect(toStrictParameters(schema)).toEqual({ parameters: schema, strict: false });
    const open = { type: "object", properties: { a: { type: "string" } }, required: ["a"] };
    expect(toStrictParameters(open).strict).toBe(false);
  });
});
