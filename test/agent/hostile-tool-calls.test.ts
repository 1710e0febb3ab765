/**
 * A hostile or buggy MODEL, driven through a real AgentSession against the fake Responses server:
 * tool calls with arguments of the wrong shape, paths that try to leave the workspace or reach
 * valarmind's own files, oversized arguments, unknown tools, hundreds of calls in one step,
 * repeated call ids, a front end misusing the approval protocol, and a model that loops. In every
 * case: the turn ends (nothing hangs), the model gets an error it can act on, nothing outside the
 * workspace (or in `.git/` and `.valarmind/`) is touched, what the user wrote stays, and the
 * transcript stays valid (a user record and a turn_end for every turn, no damaged line, every
 * function_call the next request carries paired with exactly one output).
 *
 * Path and argument checks of the registry alone are in test/tools/ (arguments, confine,
 * edit-file, read-file); plain `..`/absolute/symlink reads and the basic approval flows through
 * the agent are in test/agent/approvals.test.ts. This file covers what those do not.
 *
 * Cases under a "Once a bug" comment found real bugs, since fixed; the comment says what happened.
 */
import { afterAll, afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, lstatSync, readdirSync, readFileSync, symlinkSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import type { AgentEvent, ApprovalDecision, AnswerApproval } from "../../src/agent/events.ts";
import type { AgentSession } from "../../src/agent/session.ts";
import { readSession } from "../../src/session/transcript.ts";
import { cleanupTempDirs } from "../support/cli.ts";
import {
  inputItems,
  lastInputItem,
  startFakeResponsesServer,
  textStream,
  toolCallStream,
  toolOutputsThisTurn,
  type FakeResponsesServer,
  type FakeToolCall,
  type StreamResponse,
} from "../support/fake-responses-server.ts";
import { errorEvents, makeGitWorkspace, manifests, openAgent, recordsOf, runTurn, type TurnResult } from "./support/agent-harness.ts";

let server: FakeResponsesServer;
beforeEach(() => {
  server = startFakeResponsesServer();
});
afterEach(async () => {
  await server.close();
});
afterAll(cleanupTempDirs);

type ApprovalRequestEvent = Extract<AgentEvent, { type: "approval_request" }>;
type ToolEndEvent = Extract<AgentEvent, { type: "tool_call_end" }>;

const ORIGINAL = "export const a = 1;\n";

/** A workspace with src/a.ts, and a directory outside it holding a secret file. */
async function workspaces(files: Record<string, string> = {}): Promise<{ root: string; outside: string }> {
  const outside = await makeGitWorkspace({ "secret.txt": "outside, never to be touched\n" });
  const root = await makeGitWorkspace({ "src/a.ts": ORIGINAL, ...files });
  return { root, outside };
}

/** Every file under `dir` (symlinks not followed) with its content: to prove nothing changed. */
function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (at: string, rel: string): void => {
    for (const name of readdirSync(at).sort()) {
      const abs = join(at, name);
      const key = rel === "" ? name : `${rel}/${name}`;
      const info = lstatSync(abs);
      if (info.isDirectory()) walk(abs, key);
      else out[key] = info.isSymbolicLink() ? "<symlink>" : readFileSync(abs, "latin1");
    }
  };
  walk(dir, "");
  return out;
}

function toolEnds(events: readonly AgentEvent[]): ToolEndEvent[] {
  return events.filter((e): e is ToolEndEvent => e.type === "tool_call_end");
}

function approvalRequests(events: readonly AgentEvent[]): ApprovalRequestEvent[] {
  return events.filter((e): e is ApprovalRequestEvent => e.type === "approval_request");
}

/** The function_call_outputs of this turn in request `index` (the model's view of its calls). */
function outputsSeen(index: number): string[] {
  return toolOutputsThisTurn(server.requests[index]?.body ?? {}).map((o) => o.output ?? "");
}

/**
 * The request's function_calls and function_call_outputs pair up one to one by call_id, each
 * call_id once: what the Responses API requires of the input.
 */
function expectPairedCalls(index: number): void {
  const items = inputItems(server.requests[index]?.body ?? {});
  const calls = items.filter((i) => i.type === "function_call").map((i) => i.call_id);
  const outputs = items.filter((i) => i.type === "function_call_output").map((i) => i.call_id);
  expect(new Set(calls).size).toBe(calls.length);
  expect([...outputs].sort()).toEqual([...calls].sort());
}

/**
 * The transcript on disk is whole: no damaged or torn line, turns 1..n each with their user
 * record and one turn_end (with `stopReasons` in order), every tool_call of a turn with a
 * distinct call id.
 */
function expectValidTranscript(session: AgentSession, stopReasons: string[]): void {
  const file = session.transcriptPath;
  if (!file) throw new Error("no transcript");
  const read = readSession(file);
  expect(read.damaged).toEqual([]);
  expect(read.tornTail).toBeUndefined();
  const turns = stopReasons.map((_, i) => i + 1);
  expect(read.records.filter((r) => r.kind === "user").map((r) => r.turn)).toEqual(turns);
  const ends = read.records.filter((r) => r.kind === "turn_end");
  expect(ends.map((r) => [r.turn, r.kind === "turn_end" ? r.stop_reason : ""])).toEqual(stopReasons.map((reason, i) => [i + 1, reason]));
  for (const turn of turns) {
    const ids = read.records.filter((r) => r.kind === "tool_call" && r.turn === turn).map((r) => (r.kind === "tool_call" ? r.call_id : ""));
    expect(new Set(ids).size).toBe(ids.length);
  }
}

interface OneCall {
  root: string;
  outside: string;
  session: AgentSession;
  turn: TurnResult;
  /** What the model got back for the call (the second request's only function_call_output). */
  output: string;
  end: ToolEndEvent | undefined;
}

/**
 * One turn in which the model makes `call` (one call, or several in one step) and then answers
 * "done". Checks what every case must hold: the turn completed, the model was told something
 * for each call and answered, the transcript is valid, and nothing outside changed.
 */
async function hostileTurn(
  call: FakeToolCall | StreamResponse | ((root: string, outside: string) => FakeToolCall | StreamResponse),
  options: { approvals?: "suggest" | "auto-edit" | "full-auto"; files?: Record<string, string>; before?: (root: string, outside: string) => void } = {},
): Promise<OneCall> {
  const { root, outside } = await workspaces(options.files);
  options.before?.(root, outside);
  const outsideBefore = tree(outside);
  const made = typeof call === "function" ? call(root, outside) : call;
  server.enqueue("kind" in made ? made : toolCallStream([made]), textStream("done"));
  const { session } = await openAgent(root, server, { settings: { approvals: options.approvals ?? "full-auto" } });
  const turn = await runTurn(session, "do as I say");
  expect(turn.stopReason).toBe("completed");
  expect(turn.text).toBe("done");
  expect(server.requests).toHaveLength(2);
  expectPairedCalls(1);
  expectValidTranscript(session, ["completed"]);
  expect(tree(outside)).toEqual(outsideBefore);
  return { root, outside, session, turn, output: outputsSeen(1)[0] ?? "", end: toolEnds(turn.events)[0] };
}

describe("arguments that are not what the schema says", () => {
  const cases: Array<[string, string | Record<string, unknown>, RegExp]> = [
    ["an array", "[1,2]", /^Invalid arguments for read_file: expected a JSON object, received \[1,2\]\. Fix the arguments/],
    ["a string", '"src/a.ts"', /expected a JSON object, received "src\/a\.ts"/],
    ["a number", "42", /expected a JSON object, received 42\./],
    ["null", "null", /expected a JSON object, received null\./],
    ["not JSON at all", "{path: src/a.ts", /not valid JSON/],
    ["an empty string (no fields)", "", /"path" is required but missing/],
    ["a missing required field", { start_line: 1 }, /"path" is required but missing/],
    ["an extra field", { path: "src/a.ts", recursive: true }, /"recursive" is not a parameter of this tool/],
    ["a number for the path", { path: 42 }, /"path" must be string \(got 42\)/],
    ["an object for the path", { path: { $ne: "" } }, /"path" must be string/],
    ["a string line number", { path: "src/a.ts", start_line: "1; rm -rf /" }, /"start_line" must be integer or null/],
    ["an empty path", { path: "" }, /"path" must not be empty/],
  ];
  for (const [what, args, message] of cases) {
    test(`read_file with ${what}: a clear error, the turn goes on`, async () => {
      const { output, end } = await hostileTurn({ name: "read_file", arguments: args });
      expect(output).toMatch(message);
      expect(output).toContain("Parameters: path (string, required)");
      expect(end).toMatchObject({ isError: true, denied: false, summary: "read_file: invalid arguments" });
    });
  }

  test("write_file with arguments of the wrong shape writes nothing", async () => {
    const { root, output } = await hostileTurn({ name: "write_file", arguments: { path: "src/a.ts", content: ["not", "a", "string"] } });
    expect(output).toMatch(/"content" must be string/);
    expect(readFileSync(join(root, "src/a.ts"), "utf8")).toBe(ORIGINAL);
  });

  test("a path of whitespace is refused as empty", async () => {
    const { output } = await hostileTurn({ name: "write_file", arguments: { path: "   ", content: "x" } });
    expect(output).toBe("Error: path is empty; give a path relative to the workspace root.");
  });
});

describe("paths that try to leave the workspace or reach protected files (full-auto: nothing asks)", () => {
  test("a NUL byte: refused for read and write, no file made (no truncation at the NUL)", async () => {
    const { root, output, session } = await hostileTurn(
      toolCallStream([
        { name: "read_file", arguments: { path: "src/a.ts\u0000../../etc/passwd" } },
        { name: "write_file", arguments: { path: "src/a.ts\u0000.bak", content: "overwritten?" } },
      ]),
    );
    expect(output).toBe("Error: path contains a NUL byte.");
    expect(outputsSeen(1)).toEqual(["Error: path contains a NUL byte.", "Error: path contains a NUL byte."]);
    expect(readFileSync(join(root, "src/a.ts"), "utf8")).toBe(ORIGINAL);
    expect(readdirSync(join(root, "src"))).toEqual(["a.ts"]);
    // The transcript keeps the call's arguments exactly (JSON-escaped), NUL included.
    expect(recordsOf(session, "tool_call")[0]?.arguments).toContain("\\u0000");
  });

  test("edit_file and write_file with absolute paths outside: refused, the outside file is unchanged", async () => {
    const { output, end } = await hostileTurn((_root, outside) =>
      toolCallStream([
        { name: "edit_file", arguments: { path: join(outside, "secret.txt"), old_string: "outside", new_string: "pwned" } },
        { name: "write_file", arguments: { path: join(outside, "planted.txt"), content: "x" } },
        { name: "write_file", arguments: { path: "/tmp/../" + join(outside, "planted.txt"), content: "x" } },
      ]),
    );
    expect(output).toMatch(/^Error: path '.*secret\.txt' is outside the workspace/);
    for (const seen of outputsSeen(1)) expect(seen).toMatch(/is outside the workspace/);
    expect(end).toMatchObject({ isError: true, denied: false });
  });

  test("write_file and edit_file through a symlink to outside (a directory link and a file link): refused", async () => {
    const { output } = await hostileTurn(
      toolCallStream([
        { name: "write_file", arguments: { path: "linkdir/new.txt", content: "planted" } },
        { name: "edit_file", arguments: { path: "linkdir/secret.txt", old_string: "outside", new_string: "pwned" } },
        { name: "write_file", arguments: { path: "linkfile", content: "overwritten" } },
      ]),
      {
        before: (root, outside) => {
          symlinkSync(outside, join(root, "linkdir"));
          symlinkSync(join(outside, "secret.txt"), join(root, "linkfile"));
        },
      },
    );
    expect(output).toMatch(/resolves through a symlink to .*, which is outside the workspace/);
    const outputs = outputsSeen(1);
    expect(outputs).toHaveLength(3);
    for (const seen of outputs) expect(seen).toMatch(/outside the workspace/);
  });

  test("`..` escapes that climb back in or out: only the ones that stay inside work", async () => {
    const { root, outside } = await workspaces();
    const name = outside.split("/").at(-1);
    const rootName = root.split("/").at(-1);
    server.enqueue(
      toolCallStream([
        { name: "write_file", arguments: { path: `src/../../${name}/planted.txt`, content: "x" } },
        { name: "write_file", arguments: { path: `../${rootName}/src/inside.txt`, content: "inside\n" } },
        { name: "read_file", arguments: { path: `src/../../../../../../../../etc/hostname` } },
      ]),
      textStream("done"),
    );
    const { session } = await openAgent(root, server, { settings: { approvals: "full-auto" } });
    const turn = await runTurn(session, "go");
    expect(turn.stopReason).toBe("completed");
    const [escaped, climbedBack, etc] = outputsSeen(1);
    expect(escaped).toMatch(/outside the workspace/);
    expect(climbedBack).toBe("Created src/inside.txt (1 lines).");
    expect(etc).toMatch(/outside the workspace/);
    expect(existsSync(join(outside, "planted.txt"))).toBe(false);
    expect(readFileSync(join(root, "src/inside.txt"), "utf8")).toBe("inside\n");
  });

  test("`~` is not expanded: it names a directory inside the workspace, never the home directory", async () => {
    const marker = `valarmind-hostile-${process.pid}-${Date.now()}.txt`;
    const { root } = await workspaces();
    server.enqueue(
      toolCallStream([
        { name: "read_file", arguments: { path: "~/.bashrc" } },
        { name: "write_file", arguments: { path: `~/${marker}`, content: "x\n" } },
      ]),
      textStream("done"),
    );
    const { session } = await openAgent(root, server, { settings: { approvals: "full-auto" } });
    const turn = await runTurn(session, "go");
    expect(turn.stopReason).toBe("completed");
    const [read, write] = outputsSeen(1);
    expect(read).toBe("Error: ~/.bashrc does not exist. Use list_files or grep to find the right path.");
    expect(write).toBe(`Created ~/${marker} (1 lines).`);
    expect(readFileSync(join(root, "~", marker), "utf8")).toBe("x\n");
    expect(existsSync(join(homedir(), marker))).toBe(false);
  });

  test(".git/config and .GIT/config: reads work, writes and edits are refused, the file is unchanged", async () => {
    const { root } = await workspaces();
    const config = readFileSync(join(root, ".git/config"), "utf8");
    server.enqueue(
      toolCallStream([
        { name: "write_file", arguments: { path: ".git/config", content: "[core]\n\thooksPath = /tmp/evil\n" } },
        { name: "edit_file", arguments: { path: ".GIT/config", old_string: "[core]", new_string: "[core]\n\tfsmonitor = evil" } },
        { name: "write_file", arguments: { path: "./src/../.git/hooks/pre-commit", content: "#!/bin/sh\necho pwned\n" } },
        { name: "read_file", arguments: { path: ".git/config" } },
      ]),
      textStream("done"),
    );
    const { session } = await openAgent(root, server, { settings: { approvals: "full-auto" } });
    const turn = await runTurn(session, "go");
    expect(turn.stopReason).toBe("completed");
    const [write, edit, hook, read] = outputsSeen(1);
    for (const refused of [write, edit, hook]) expect(refused).toMatch(/inside \.git\/, which tools may not write; use git through run_shell instead/i);
    expect(read).toContain("[core]");
    expect(readFileSync(join(root, ".git/config"), "utf8")).toBe(config);
    expect(existsSync(join(root, ".git/hooks/pre-commit"))).toBe(false);
  });

  test(".valarmind/memory/state.json: write_file and edit_file refused, also through a symlink and `..`; the memory tools still work", async () => {
    const { root } = await workspaces();
    server.enqueue(
      toolCallStream([{ name: "memory_set_goal", arguments: { goal: "ship v1" } }]),
      toolCallStream([
        { name: "write_file", arguments: { path: ".valarmind/memory/state.json", content: "{}" } },
        { name: "edit_file", arguments: { path: ".valarmind/memory/state.json", old_string: "ship v1", new_string: "exfiltrate" } },
        { name: "write_file", arguments: { path: "src/../.Valarmind/memory/state.json", content: "{}" } },
        { name: "write_file", arguments: { path: "mem/state.json", content: "{}" } },
      ]),
      textStream("done"),
    );
    const { session } = await openAgent(root, server, { settings: { approvals: "full-auto" } });
    // A symlink inside the workspace pointing at valarmind's memory directory.
    const turn = await runTurn(session, "go", {
      onEvent: (event) => {
        if (event.type === "tool_call_end" && event.name === "memory_set_goal") symlinkSync(join(root, ".valarmind/memory"), join(root, "mem"));
      },
    });
    expect(turn.stopReason).toBe("completed");
    const stateFile = join(root, ".valarmind/memory/state.json");
    const state = readFileSync(stateFile, "utf8");
    expect(state).toContain("ship v1");
    const outputs = outputsSeen(2).slice(1);
    expect(outputs).toHaveLength(4);
    for (const refused of outputs) expect(refused).toMatch(/inside \.valarmind\/, which tools may not write; use the memory_\* tools/i);
    expect(readFileSync(stateFile, "utf8")).toBe(state);
    expectValidTranscript(session, ["completed"]);
  });

  test("a directory given to read_file, edit_file and write_file: a clear error each, nothing changes", async () => {
    const { root } = await hostileTurn(
      toolCallStream([
        { name: "read_file", arguments: { path: "src" } },
        { name: "edit_file", arguments: { path: "src", old_string: "a", new_string: "b" } },
        { name: "write_file", arguments: { path: "src", content: "flattened" } },
        { name: "read_file", arguments: { path: "." } },
      ]),
    );
    const [read, edit, write, dot] = outputsSeen(1);
    expect(read).toBe("Error: src is a directory; use list_files to see its contents.");
    expect(edit).toMatch(/^Error: src is a directory/);
    expect(write).toMatch(/^Error: src is a directory/);
    expect(dot).toBe("Error: . is a directory; use list_files to see its contents.");
    expect(readFileSync(join(root, "src/a.ts"), "utf8")).toBe(ORIGINAL);
  });

  test.if(process.platform === "linux")(
    "unicode look-alikes (NFD vs NFC, Cyrillic а): another file, never the user's; an approval says create, not overwrite",
    async () => {
      const nfc = "src/\u00e1.ts";
      const { root } = await workspaces({ [nfc]: "const user = 'kept';\n" });
      server.enqueue(
        toolCallStream([
          { name: "edit_file", arguments: { path: "src/a\u0301.ts", old_string: "kept", new_string: "lost" } },
          { name: "write_file", arguments: { path: "src/a\u0301.ts", content: "decomposed\n" } },
          { name: "write_file", arguments: { path: "src/\u0430.ts", content: "cyrillic\n" } },
        ]),
        textStream("done"),
      );
      const { session } = await openAgent(root, server, { interactive: true });
      const turn = await runTurn(session, "go", { onEvent: (event, answer) => void (event.type === "approval_request" && answer(event.id, { kind: "allow_once" })) });
      expect(turn.stopReason).toBe("completed");
      const [edit] = outputsSeen(1);
      expect(edit).toMatch(/^Error: src\/a\u0301\.ts does not exist\. Use write_file to create it\./);
      // What the user approves says "create": the file is new, whatever it looks like.
      expect(approvalRequests(turn.events).map((a) => a.description)).toEqual(["create src/a\u0301.ts (1 lines)", "create src/\u0430.ts (1 lines)"]);
      expect(readFileSync(join(root, nfc), "utf8")).toBe("const user = 'kept';\n");
      expect(readdirSync(join(root, "src")).sort()).toEqual(["a.ts", "a\u0301.ts", "\u00e1.ts", "\u0430.ts"].sort());
      expectValidTranscript(session, ["completed"]);
    },
  );
});

describe("edit_file and write_file misuse", () => {
  test("edit_file with an empty old_string, an old_string that is not unique, or one equal to new_string: refused, the file unchanged", async () => {
    const text = "x = 1;\nx = 1;\ny = 2;\n";
    const { root } = await hostileTurn(
      toolCallStream([
        { name: "edit_file", arguments: { path: "src/b.ts", old_string: "", new_string: "prepended" } },
        { name: "edit_file", arguments: { path: "src/b.ts", old_string: "x = 1;", new_string: "x = 3;" } },
        { name: "edit_file", arguments: { path: "src/b.ts", old_string: "y = 2;", new_string: "y = 2;" } },
      ]),
      { files: { "src/b.ts": text } },
    );
    const [empty, twice, same] = outputsSeen(1);
    expect(empty).toBe("Error: old_string is empty. To create a file or replace all of it, use write_file.");
    expect(twice).toMatch(/^Error: old_string matches 2 times in src\/b\.ts \(at lines 1, 2\); nothing was changed\./);
    expect(same).toMatch(/identical; there is nothing to change/);
    expect(readFileSync(join(root, "src/b.ts"), "utf8")).toBe(text);
  });

  /**
   * A model that sends a huge argument (a 100 KB path, a 5 MB old_string) gets a clean tool error
   * and the turn goes on: the current turn's arguments past CURRENT_ARGUMENT_KEEP_CHARS are cut in
   * the next request like a past turn's (once a bug: the request could not be built and the turn
   * ended with a budget error). Nothing is written, nothing hangs, the transcript is valid, the
   * next turn works and the session resumes.
   */
  const huge: Array<[string, () => StreamResponse, RegExp]> = [
    ["a 100 KB path", () => hugeArgumentsCall("read_file", { path: "a/".repeat(50_000) }), /^Error: read_file failed: ENAMETOOLONG: name too long/],
    ["a 5 MB old_string", () => hugeArgumentsCall("edit_file", { path: "src/a.ts", old_string: "x".repeat(5_000_000), new_string: "y" }), /^Error: old_string was not found in src\/a\.ts \(0 matches\); nothing was changed\.$/],
  ];
  for (const [what, call, toolError] of huge) {
    test(`${what}: the model gets the tool's error and the turn completes; nothing written; the huge argument is never sent again`, async () => {
      const { root, outside } = await workspaces();
      const outsideBefore = tree(outside);
      server.enqueue(call(), textStream("understood"));
      const { session } = await openAgent(root, server, { settings: { approvals: "full-auto" } });
      const turn = await runTurn(session, "go");
      expect(turn.stopReason).toBe("completed");
      expect(errorEvents(turn.events)).toEqual([]);
      expect(toolEnds(turn.events)).toEqual([expect.objectContaining({ isError: true })]);
      expect(outputsSeen(1)[0]).toMatch(toolError);
      const [record] = recordsOf(session, "tool_call");
      expect(record?.output).toMatch(toolError);
      expect(readFileSync(join(root, "src/a.ts"), "utf8")).toBe(ORIGINAL);
      expect(tree(outside)).toEqual(outsideBefore);
      for (const request of server.requests.slice(1)) expect(request.raw.length).toBeLessThan(100_000);
      const built = await manifests(session);
      for (const m of built) expect(m.total_tokens).toBeLessThanOrEqual(m.budget_tokens);

      server.setResponder(() => textStream("second turn answered"));
      const next = await runTurn(session, "and now?");
      expect(next.stopReason).toBe("completed");
      expectPairedCalls(server.requests.length - 1);
      expectValidTranscript(session, ["completed", "completed"]);
      await session.close();
      const resumed = await openAgent(root, server, { resume: { kind: "latest" } });
      expect(resumed.session.openNotices).toEqual([]);
      await resumed.session.close();
    }, 20_000);
  }

  // Once a bug (found by this file; fixed): src/prompt/sections/conversation.ts:43-54 (`stepItems`) sends the
  // CURRENT turn's function_call arguments whole (only past turns go through
  // condenseToolArguments), and the cutoff (src/prompt/cutoff.ts:186-201, step 4) shortens only
  // function OUTPUTS. So one oversized argument (a 100 KB path, a 5 MB old_string, a 2 MB
  // write_file content) makes the next step's request impossible to build: BudgetExceededError
  // ("largest: task:call:call_…"), the turn ends with stopReason "error", the model never sees the
  // tool's error, and the hint blames the user ("shorten VALARMIND.md or the message"). Suggested
  // fix: a cutoff step before the last resort that condenses the current turn's oversized
  // function_call arguments (condenseToolArguments, as for past turns), and/or a cap on argument
  // size in the registry that refuses the call with a message asking for smaller pieces.
  test("an oversized argument: the model gets the tool's error and the turn completes", async () => {
    const { root } = await workspaces();
    server.enqueue(hugeArgumentsCall("read_file", { path: "a/".repeat(50_000) }), textStream("done"));
    const { session } = await openAgent(root, server, { settings: { approvals: "full-auto" } });
    const turn = await runTurn(session, "go");
    expect(turn.stopReason).toBe("completed");
    expect(outputsSeen(1)[0]).toMatch(/^Error: /);
    const built = await manifests(session);
    expect(built.at(-1)?.total_tokens).toBeLessThanOrEqual(built.at(-1)?.budget_tokens ?? 0);
  });

  /**
   * write_file writes up to 5 MB (read_file's bound): 2 MB is written as asked, the diff shown is
   * cut head+tail, and the turn completes (the content is not sent back whole).
   */
  test("write_file with 2 MB of content: written whole inside the workspace, the diff bounded, the turn completes", async () => {
    const content = "line of text\n".repeat(160_000);
    const { root } = await workspaces();
    server.enqueue(hugeArgumentsCall("write_file", { path: "big.txt", content }), textStream("written"));
    const { session } = await openAgent(root, server, { settings: { approvals: "full-auto" } });
    const turn = await runTurn(session, "go");
    expect(readFileSync(join(root, "big.txt"), "utf8")).toBe(content);
    const [end] = toolEnds(turn.events);
    expect(end).toMatchObject({ isError: false, summary: "created big.txt (160000 lines)" });
    expect(end?.diff?.length).toBeLessThan(300 * 1024);
    expect(end?.diff).toContain("lines of the diff not shown");
    expect(turn.stopReason).toBe("completed");
    expectValidTranscript(session, ["completed"]);
  }, 20_000);

  test("write_file with 6 MB of content is refused (at most 5 MB), nothing written", async () => {
    const { root } = await workspaces();
    server.enqueue(hugeArgumentsCall("write_file", { path: "huge.txt", content: "y".repeat(6 * 1024 * 1024) }), textStream("ok"));
    const { session } = await openAgent(root, server, { settings: { approvals: "full-auto" } });
    const turn = await runTurn(session, "go");
    expect(turn.stopReason).toBe("completed");
    expect(outputsSeen(1)[0]).toMatch(/^Error: write_file writes at most 5 MB/);
    expect(existsSync(join(root, "huge.txt"))).toBe(false);
  }, 20_000);

  // Once a bug (found by this file; fixed): src/tools/file-diff.ts:13-28 runs the `diff` package's Myers diff
  // twice (createTwoFilesPatch, then structuredPatch) with no `timeout` or `maxEditLength`, and it
  // is synchronous, in `prepare` before any approval. Its cost is O(N·D): rewriting an existing
  // file whose lines all change takes ~2 s at 2,000 lines, ~44 s at 8,000 lines (a 150 KB file)
  // (52 s through the agent) and minutes beyond, with the event loop blocked: the turn hangs,
  // and neither an abort (Ctrl-C) nor a timer can take effect until the diff ends. edit_file with replace_all over many lines has the same path.
  // Suggested fix: pass `{ timeout, maxEditLength }` (diff v9 supports both) and fall back to a
  // whole-file "-old +new" diff (or a summary) when it gives up; compute the patch once and count
  // +/- from it; consider a content cap for write_file (see the 20 MB case below).
  test("write_file rewriting every line of an 8,000-line file finishes in a few seconds", async () => {
    const lines = (word: string) => Array.from({ length: 8000 }, (_, i) => `${word} line ${i}`).join("\n") + "\n";
    const { root } = await workspaces({ "big.txt": lines("old") });
    server.enqueue(toolCallStream([{ name: "write_file", arguments: { path: "big.txt", content: lines("new") } }]), textStream("done"));
    const { session } = await openAgent(root, server, { settings: { approvals: "full-auto" } });
    const started = performance.now();
    const turn = await runTurn(session, "rewrite it");
    // A hang bound (it took ~50 s before the diff gave up on its own), not a speed target.
    expect(performance.now() - started).toBeLessThan(30_000);
    expect(turn.stopReason).toBe("completed");
  }, 120_000);

  // Once a bug (found by this file; fixed): no cap on write_file content (src/tools/write-file.ts:12-18, no
  // maxLength) nor on the size of the diff carried by tool_call_end / approval_request
  // (src/tools/registry.ts:161 copies result.diff as is). 20 MB of content: ~10 s of synchronous
  // work (the diff, src/tools/file-diff.ts, ~5 s; token counting of the arguments ~1 s), a 22 MB
  // diff in one UI event and in the approval prompt, then the budget error above. Suggested fix:
  // cap the content (e.g. 5 MB, read_file's cap) with an error asking for smaller pieces, and cap
  // the diff shown (head+tail with a marker).
  test("write_file with 20 MB of content is refused before any diff with a clear error", async () => {
    const { root } = await workspaces();
    server.enqueue(hugeArgumentsCall("write_file", { path: "big.txt", content: "line of text\n".repeat(1_600_000) }), textStream("done"));
    const { session } = await openAgent(root, server, { settings: { approvals: "full-auto" } });
    const turn = await runTurn(session, "go");
    expect(existsSync(join(root, "big.txt"))).toBe(false);
    expect(turn.stopReason).toBe("completed");
    expect(outputsSeen(1)[0]).toMatch(/^Error: write_file writes at most 5 MB/);
    // Refused before the diff: no diff reaches the UI.
    expect(toolEnds(turn.events)[0]?.diff).toBeUndefined();
  }, 20_000);
});

/**
 * A tool call whose argument JSON is built directly into the SSE body: the fake server's builder
 * streams arguments in 6-character deltas, which for megabytes would be millions of events.
 */
function hugeArgumentsCall(name: string, args: Record<string, unknown>): StreamResponse {
  const placeholder = "@ARGS@";
  const stream = toolCallStream([{ name, arguments: placeholder }]);
  const escaped = JSON.stringify(JSON.stringify(args)).slice(1, -1);
  return { ...stream, body: stream.body.replaceAll(placeholder, escaped), label: `${name} with ${escaped.length} bytes of arguments` };
}

describe("tool names and call ids", () => {
  test("a tool that does not exist and a tool name in the wrong case: the model is told the real names", async () => {
    await hostileTurn(
      toolCallStream([
        { name: "delete_everything", arguments: { path: "/" } },
        { name: "Read_File", arguments: { path: "src/a.ts" } },
        { name: "read_file ", arguments: { path: "src/a.ts" } },
      ]),
    );
    const outputs = outputsSeen(1);
    expect(outputs).toHaveLength(3);
    expect(outputs[0]).toMatch(/^Error: there is no tool named "delete_everything"\. Available tools: read_file, list_files, grep, edit_file, write_file, run_shell, /);
    expect(outputs[1]).toMatch(/^Error: there is no tool named "Read_File"\. Available tools: read_file,/);
    expect(outputs[2]).toMatch(/^Error: there is no tool named "read_file "\./);
  });

  test("the same call_id twice in one step: both calls run, each gets its own output, ids stay unique", async () => {
    const { root, session } = await hostileTurn(
      toolCallStream([
        { name: "write_file", arguments: { path: "one.txt", content: "1\n" }, callId: "call_same" },
        { name: "write_file", arguments: { path: "two.txt", content: "2\n" }, callId: "call_same" },
      ]),
    );
    expect(readFileSync(join(root, "one.txt"), "utf8")).toBe("1\n");
    expect(readFileSync(join(root, "two.txt"), "utf8")).toBe("2\n");
    const ids = recordsOf(session, "tool_call").map((r) => r.call_id);
    expect(ids).toHaveLength(2);
    expect(ids[0]).toBe("call_same");
    expect(ids[1]).not.toBe("call_same");
    expect(outputsSeen(1)).toEqual(["Created one.txt (1 lines).", "Created two.txt (1 lines)."]);
  });

  test("the same call_id twice in one step, in suggest mode: two separate approvals, each answered on its own", async () => {
    const { root } = await workspaces();
    server.enqueue(
      toolCallStream([
        { name: "write_file", arguments: { path: "one.txt", content: "1\n" }, callId: "call_same" },
        { name: "write_file", arguments: { path: "two.txt", content: "2\n" }, callId: "call_same" },
      ]),
      textStream("done"),
    );
    const { session } = await openAgent(root, server, { interactive: true });
    const turn = await runTurn(session, "go", {
      onEvent: (event, answer) => {
        if (event.type !== "approval_request") return;
        expect(answer(event.id, event.description.includes("one.txt") ? { kind: "deny" } : { kind: "allow_once" })).toBe(true);
      },
    });
    const asked = approvalRequests(turn.events);
    expect(asked).toHaveLength(2);
    expect(new Set(asked.map((a) => a.id)).size).toBe(2);
    expect(existsSync(join(root, "one.txt"))).toBe(false);
    expect(readFileSync(join(root, "two.txt"), "utf8")).toBe("2\n");
    expectPairedCalls(1);
    expectValidTranscript(session, ["completed"]);
  });

  test("200 tool calls in one step: the first 64 run, the rest are dropped unrun with a notice; the model is told; the next request pairs 64 outputs within the budget", async () => {
    const big = Array.from({ length: 400 }, (_, i) => `export const value${i} = "${"x".repeat(20)}";`).join("\n") + "\n";
    // Each read starts at another line, so no two outputs are identical (identical ones are sent once).
    const calls = Array.from({ length: 200 }, (_, i): FakeToolCall => (i % 2 === 0 ? { name: "read_file", arguments: { path: "src/big.ts", start_line: i + 1 } } : { name: "nope", arguments: {} }));
    const { session, turn } = await hostileTurn(toolCallStream(calls), { files: { "src/big.ts": big } });
    expect(outputsSeen(1)).toHaveLength(64);
    expect(outputsSeen(1).at(-1)).toContain("[valarmind: this response had 200 tool calls; only the first 64 ran, and the other 136 were dropped without running.");
    expect(recordsOf(session, "tool_call")).toHaveLength(64);
    const notices = turn.events.flatMap((e) => (e.type === "notice" ? [e.message] : []));
    expect(notices).toContain("the model sent 200 tool calls in one response; the first 64 ran, the other 136 were dropped without running");
    const [first, second] = await manifests(session);
    expect(first?.total_tokens).toBeLessThanOrEqual(first?.budget_tokens ?? 0);
    expect(second?.total_tokens).toBeLessThanOrEqual(second?.budget_tokens ?? 0);
    expect(lastInputItem(server.requests[1]?.body ?? {})?.type).toBe("function_call_output");
  }, 20_000);

  // Once a bug (found by this file; fixed): nothing bounds the number of tool calls run in one step
  // (src/agent/turn-loop.ts:253-280 runs every call the model returned), and the current turn's
  // steps are never dropped from the next request (src/prompt/cutoff.ts:82-88 leaves them out of
  // the floor, but no cutoff step removes them). 800 small calls (read_file of missing files) need ~33k
  // tokens against the default 24k: BudgetExceededError, whose "largest" list names only core
  // rules and tool definitions, not the 800 calls that caused it. Suggested fix: cap calls per
  // step (e.g. 64; the rest answered "not run: too many calls in one step, at most N") so the
  // next request always fits, and name the current turn's steps in the budget error.
  test("800 tool calls in one step: the model is told to make fewer and the turn completes", async () => {
    const { root } = await workspaces();
    server.enqueue(toolCallStream(Array.from({ length: 800 }, (_, i) => ({ name: "read_file", arguments: { path: `missing-${i}.ts` } }))), textStream("done"));
    const { session } = await openAgent(root, server, { settings: { approvals: "full-auto" } });
    const turn = await runTurn(session, "go");
    expect(turn.stopReason).toBe("completed");
    expectPairedCalls(1);
  });
});

describe("approval protocol misuse (suggest, interactive: writes ask)", () => {
  const write = (path: string, content = `${path}\n`): FakeToolCall => ({ name: "write_file", arguments: { path, content } });

  async function interactive(calls: FakeToolCall[][], onEvent: (event: AgentEvent, answer: AnswerApproval) => void, signal?: AbortSignal, holder: { session?: AgentSession } = {}) {
    const { root } = await workspaces();
    server.enqueue(...calls.map((step) => toolCallStream(step)), textStream("done"));
    const { session } = await openAgent(root, server, { interactive: true });
    holder.session = session;
    const turn = await runTurn(session, "write things", { onEvent, ...(signal ? { signal } : {}) });
    return { root, session, turn };
  }

  test("answering an approval twice: the second answer is refused and changes nothing", async () => {
    const answers: boolean[] = [];
    const holder: { session?: AgentSession } = {};
    const { root, session, turn } = await interactive(
      [[write("a.txt")], [write("b.txt")]],
      (event, answer) => {
        if (event.type !== "approval_request") return;
        const [first, second]: [ApprovalDecision, ApprovalDecision] = event.description.includes("a.txt") ? [{ kind: "allow_once" }, { kind: "deny" }] : [{ kind: "deny" }, { kind: "allow_once" }];
        answers.push(answer(event.id, first), answer(event.id, second), holder.session?.answer(event.id, second) ?? true);
      },
      undefined,
      holder,
    );
    expect(turn.stopReason).toBe("completed");
    expect(answers).toEqual([true, false, false, true, false, false]);
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("a.txt\n");
    expect(existsSync(join(root, "b.txt"))).toBe(false);
    expect(toolEnds(turn.events).map((e) => e.denied)).toEqual([false, true]);
    expectValidTranscript(session, ["completed"]);
  });

  test("answering unknown ids: refused; the real request still waits for its own answer", async () => {
    const tried: boolean[] = [];
    const { root, turn } = await interactive([[write("a.txt")]], (event, answer) => {
      if (event.type !== "approval_request") return;
      for (const id of ["", "nope", "0/call_x", `${event.id}/`, event.callId, event.id.toUpperCase(), "1/*"]) tried.push(answer(id, { kind: "allow_session", scope: "tool" }));
      tried.push(answer(event.id, { kind: "deny", note: "no" }));
    });
    expect(tried).toEqual([false, false, false, false, false, false, false, true]);
    expect(turn.stopReason).toBe("completed");
    expect(existsSync(join(root, "a.txt"))).toBe(false);
    expect(outputsSeen(1)[0]).toContain('Denied: the user did not approve "create a.txt (1 lines)" (no)');
  });

  test("answering after the turn was aborted: refused, the tool never runs, nothing more is sent", async () => {
    const abort = new AbortController();
    let asked: ApprovalRequestEvent | undefined;
    let late: AnswerApproval | undefined;
    const { root, session, turn } = await interactive(
      [[write("a.txt")]],
      (event, answer) => {
        if (event.type !== "approval_request") return;
        asked = event;
        late = answer;
        abort.abort();
      },
      abort.signal,
    );
    expect(turn.stopReason).toBe("aborted");
    if (!asked || !late) throw new Error("no approval was asked");
    expect(late(asked.id, { kind: "allow_once" })).toBe(false);
    expect(session.answer(asked.id, { kind: "allow_once" })).toBe(false);
    await Bun.sleep(50);
    expect(existsSync(join(root, "a.txt"))).toBe(false);
    expect(server.requests).toHaveLength(1);
    expect(toolEnds(turn.events)).toEqual([expect.objectContaining({ denied: true })]);
    expectValidTranscript(session, ["aborted"]);
  });

  test("an allow that arrives just after the abort (before turn_end): the tool still does not run in that turn", async () => {
    const abort = new AbortController();
    const { root, session, turn } = await interactive(
      [[write("a.txt")]],
      (event, answer) => {
        if (event.type !== "approval_request") return;
        abort.abort();
        answer(event.id, { kind: "allow_once" });
      },
      abort.signal,
    );
    expect(turn.stopReason).toBe("aborted");
    await Bun.sleep(50);
    expect(existsSync(join(root, "a.txt"))).toBe(false);
    expect(server.requests).toHaveLength(1);
    expectValidTranscript(session, ["aborted"]);
  });

  test("aborting while an approval is pending, with more calls queued in the step: none runs, later ones are never asked, the next turn's input stays paired", async () => {
    const abort = new AbortController();
    const { root, session, turn } = await interactive(
      [[write("a.txt"), write("b.txt"), { name: "run_shell", arguments: { command: "echo ran > ran.txt" } }]],
      (event) => {
        if (event.type === "approval_request") abort.abort();
      },
      abort.signal,
    );
    expect(turn.stopReason).toBe("aborted");
    expect(approvalRequests(turn.events)).toHaveLength(1);
    expect(turn.types.filter((t) => t === "tool_call_start")).toHaveLength(1);
    await Bun.sleep(50);
    for (const name of ["a.txt", "b.txt", "ran.txt"]) expect(existsSync(join(root, name))).toBe(false);
    expect(recordsOf(session, "tool_call")).toHaveLength(1);

    server.enqueue(textStream("ok"));
    const next = await runTurn(session, "never mind");
    expect(next.stopReason).toBe("completed");
    expectPairedCalls(1);
    expectValidTranscript(session, ["aborted", "completed"]);
  });

  test("two writes in one step answered in reverse order: the second id cannot be answered before it is asked", async () => {
    // Calls run one at a time, so at most one approval is open; a front end that answers the id it
    // expects next (ids are `${turn}/${callId}`) before it is asked is refused, and the call still asks.
    const tried: boolean[] = [];
    let firstId = "";
    const { root, turn } = await interactive(
      [
        [
          { ...write("a.txt"), callId: "call_first" },
          { ...write("b.txt"), callId: "call_second" },
        ],
      ],
      (event, answer) => {
        if (event.type !== "approval_request") return;
        if (event.callId === "call_first") {
          firstId = event.id;
          tried.push(answer("1/call_second", { kind: "allow_once" }));
          tried.push(answer(event.id, { kind: "allow_once" }));
        } else {
          tried.push(answer(firstId, { kind: "deny" }));
          tried.push(answer(event.id, { kind: "deny" }));
        }
      },
    );
    expect(tried).toEqual([false, true, false, true]);
    expect(approvalRequests(turn.events).map((a) => a.id)).toEqual(["1/call_first", "1/call_second"]);
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("a.txt\n");
    expect(existsSync(join(root, "b.txt"))).toBe(false);
  });
});

describe("a model that loops", () => {
  const loops: Array<[string, FakeToolCall, "suggest" | "full-auto"]> = [
    ["the same failing read", { name: "read_file", arguments: { path: "missing.ts" } }, "full-auto"],
    ["the same refused write (headless suggest)", { name: "write_file", arguments: { path: "src/a.ts", content: "clobbered\n" } }, "suggest"],
    ["the same invalid arguments", { name: "edit_file", arguments: "[]" }, "full-auto"],
  ];
  for (const [what, call, approvals] of loops) {
    // Was: the same call ran in every step until maxStepsPerTurn (24 requests, each re-sending the turn).
    test(`${what}: the third in a row is not run and the model is told; the fourth stops the turn (kind loop); the next turn works`, async () => {
      const { root } = await workspaces();
      server.setResponder(() => toolCallStream([call]));
      const { session } = await openAgent(root, server, { settings: { approvals, maxStepsPerTurn: 10 } });
      const turn = await runTurn(session, "do it");
      expect(turn.stopReason).toBe("error");
      expect(server.requests).toHaveLength(4);
      const errors = errorEvents(turn.events);
      expect(errors.map((e) => e.kind)).toEqual(["loop"]);
      expect(errors[0]?.message).toContain(`the same ${call.name} call, with the same arguments, 4 times in a row`);
      const notices = turn.events.filter((e) => e.type === "notice").map((e) => (e.type === "notice" ? e.message : ""));
      expect(notices).toContain(`the model made the same ${call.name} call 3 times in a row; this one was not run, and the model was told to use the result it has`);
      // Three answered calls; the third's answer says it was not run. The fourth was neither run nor recorded.
      expect(toolEnds(turn.events)).toHaveLength(3);
      expect(toolEnds(turn.events).every((e) => e.isError)).toBe(true);
      const third = toolOutputsThisTurn(server.requests[3]?.body ?? {}).at(-1);
      expect(third?.output).toContain(`Not run: this is the same ${call.name} call, with the same arguments, 3 times in a row`);
      expect(recordsOf(session, "turn_end")).toEqual([expect.objectContaining({ stop_reason: "error", steps: 4 })]);
      expect(recordsOf(session, "note")).toEqual([expect.objectContaining({ what: "error:loop" })]);
      expect(readFileSync(join(root, "src/a.ts"), "utf8")).toBe(ORIGINAL);
      for (let i = 1; i < 4; i++) expectPairedCalls(i);

      server.setResponder(() => textStream("fine"));
      const next = await runTurn(session, "next turn please");
      expect(next.stopReason).toBe("completed");
      expect(next.text).toBe("fine");
      expectPairedCalls(4);
      expectValidTranscript(session, ["error", "completed"]);
    });
  }

  test("three identical calls in one response: the third is not run, the turn goes on; a different call in between starts the count again", async () => {
    const { root } = await workspaces();
    const read = { name: "read_file", arguments: { path: "src/a.ts" } };
    let step = 0;
    server.setResponder(() => {
      step += 1;
      if (step === 1) return toolCallStream([read, read, read]);
      // Same call again after another one: no loop.
      if (step === 2) return toolCallStream([{ name: "list_files", arguments: {} }]);
      if (step === 3) return toolCallStream([read]);
      return textStream("done");
    });
    const { session } = await openAgent(root, server, { settings: { approvals: "full-auto" } });
    const turn = await runTurn(session, "read it");
    expect(turn.stopReason).toBe("completed");
    expect(errorEvents(turn.events)).toEqual([]);
    const ends = toolEnds(turn.events);
    expect(ends.map((e) => e.isError)).toEqual([false, false, true, false, false]);
  });

  test("varied calls until maxStepsPerTurn: stop reason max_steps, error kind max_steps with a clear message, the next turn works", async () => {
    const { root } = await workspaces();
    let n = 0;
    server.setResponder(() => toolCallStream([{ name: "read_file", arguments: { path: `missing-${++n}.ts` } }]));
    const { session } = await openAgent(root, server, { settings: { approvals: "full-auto", maxStepsPerTurn: 5 } });
    const turn = await runTurn(session, "do it");
    expect(turn.stopReason).toBe("max_steps");
    expect(server.requests).toHaveLength(5);
    // Was: kind "internal", as if valarmind had failed.
    expect(errorEvents(turn.events).map((e) => [e.kind, e.message])).toEqual([
      ["max_steps", "stopped after 5 model calls in one turn (maxStepsPerTurn); ask to continue if the work is not done"],
    ]);
    expect(recordsOf(session, "turn_end")).toEqual([expect.objectContaining({ stop_reason: "max_steps", steps: 5 })]);
    for (let i = 1; i < 5; i++) expectPairedCalls(i);
    server.setResponder(() => textStream("fine"));
    const next = await runTurn(session, "next turn please");
    expect(next.stopReason).toBe("completed");
    expectPairedCalls(5);
    expectValidTranscript(session, ["max_steps", "completed"]);
  });
});
