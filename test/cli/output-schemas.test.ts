/**
 * The published schemas of chat -p's machine-readable output (docs/schemas/): the committed files
 * are what src/schema/output-schemas-build.ts generates (so they cannot drift from the code), and
 * every line of real `chat -p --json` runs — through the CLI, against the fake Responses server,
 * covering most event types — is valid against event-stream.schema.json.
 */
import { afterAll, afterEach, beforeEach, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import Ajv2020 from "ajv/dist/2020.js";
import { outputSchemaFiles, schemaFileText } from "../../src/schema/output-schemas-build.ts";
import { cleanupTempDirs } from "../support/cli.ts";
import { fixtureError, startFakeResponsesServer, textStream, toolCallStream, type FakeResponsesServer } from "../support/fake-responses-server.ts";
import { makeGitWorkspace } from "../agent/support/agent-harness.ts";
import { chat } from "../agent/support/cli-chat.ts";

describe("docs/schemas/ is generated from the code", () => {
  test.each(outputSchemaFiles().map((file) => [file.path.split("/").pop() ?? file.path, file] as const))(
    "%s is up to date (regenerate: bun src/schema/output-schemas-build.ts)",
    (_name, file) => {
      expect(readFileSync(file.path, "utf8")).toBe(schemaFileText(file.schema));
    },
  );

  test("both are valid draft 2020-12 schemas under ajv's strict mode", () => {
    const ajv = new Ajv2020({ strict: true });
    for (const file of outputSchemaFiles()) expect(() => ajv.compile(JSON.parse(readFileSync(file.path, "utf8")) as object)).not.toThrow();
  });
});

describe("every line of a real chat -p --json run matches docs/schemas/event-stream.schema.json", () => {
  let server: FakeResponsesServer;
  let root: string;
  beforeEach(async () => {
    server = startFakeResponsesServer();
    root = await makeGitWorkspace({ "src/app.ts": "export const port = 4173;\n" });
  });
  afterEach(async () => {
    await server.close();
  });
  afterAll(cleanupTempDirs);

  test("a turn with reasoning, tools (one refused), a memory change, a retry and notices; then a failing resumed turn", async () => {
    const schemaFile = outputSchemaFiles().find((file) => file.path.endsWith("event-stream.schema.json"));
    if (!schemaFile) throw new Error("no event-stream schema among outputSchemaFiles()");
    const ajv = new Ajv2020({ strict: true, allErrors: true });
    const validate = ajv.compile(JSON.parse(readFileSync(schemaFile.path, "utf8")) as object);

    // An untrusted project setting gives a notice with a code.
    await mkdir(join(root, ".valarmind"), { recursive: true });
    await Bun.write(join(root, ".valarmind", "config.json"), `${JSON.stringify({ maxContextTokens: 30000 })}\n`);
    server.enqueue(
      toolCallStream(
        [
          { name: "read_file", arguments: { path: "src/app.ts" } },
          { name: "memory_set_goal", arguments: { goal: "document the port" } },
          { name: "write_file", arguments: { path: "notes.md", content: "port 4173\n" } },
        ],
        { reasoningSummary: ["Look at the file first."], text: "Checking." },
      ),
      fixtureError("error_429", { headers: { "retry-after-ms": "0" } }),
      textStream("The port is 4173."),
    );
    const first = await chat(["-p", "which port?", "--json"], { cwd: root, server });
    expect(first.code).toBe(0);
    server.enqueue(fixtureError("error_401", { status: 401 }));
    const second = await chat(["--continue", "-p", "and the host?", "--json"], { cwd: root, server });
    expect(second.code).toBe(1);

    const lines = `${first.stdout}${second.stdout}`.split("\n").filter((line) => line !== "");
    const seen = new Set<string>();
    for (const line of lines) {
      const value = JSON.parse(line) as { type: string };
      if (!validate(value)) throw new Error(`line does not match the schema: ${ajv.errorsText(validate.errors)}\n${line}`);
      seen.add(value.type);
    }
    // The runs covered most of the stream, so the check above means something.
    for (const type of ["session_start", "turn_start", "request_built", "reasoning_delta", "text_delta", "tool_call_start", "tool_call_end", "memory_updated", "usage", "retry", "notice", "error", "turn_end"]) {
      expect(seen).toContain(type);
    }
  });

  test("a line the code never prints fails the schema (the check is not vacuous)", () => {
    const schemaFile = outputSchemaFiles().find((file) => file.path.endsWith("event-stream.schema.json"));
    const ajv = new Ajv2020({ strict: true });
    const validate = ajv.compile(schemaFile?.schema ?? {});
    expect(validate({ v: 1, type: "turn_end", turn: 1, text: "ok", stopReason: "completed" })).toBe(true);
    expect(validate({ type: "turn_end", turn: 1, text: "ok", stopReason: "completed" })).toBe(false); // no version
    expect(validate({ v: 1, type: "turn_end", turn: 1, text: "ok", stopReason: "done" })).toBe(false);
    expect(validate({ v: 1, type: "text_delta", delta: "x", extra: true })).toBe(false);
    expect(validate({ v: 1, type: "mystery" })).toBe(false);
  });
});
