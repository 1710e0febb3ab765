/**
 * `valarmind sessions list|show`, on transcripts written by real headless turns.
 */
import { afterAll, afterEach, beforeEach, describe, expect, test } from "bun:test";
import { appendFileSync, readFileSync } from "node:fs";
import { cleanupTempDirs } from "../support/cli.ts";
import { lastUserText, startFakeResponsesServer, textStream, toolCallStream, type FakeResponsesServer } from "../support/fake-responses-server.ts";
import { makeGitWorkspace } from "../agent/support/agent-harness.ts";
import { chat, jsonEvents, sessions } from "../agent/support/cli-chat.ts";

let server: FakeResponsesServer;
let root: string;
beforeEach(async () => {
  server = startFakeResponsesServer();
  server.setResponder((body) => textStream(`echo: ${lastUserText(body)}`));
  root = await makeGitWorkspace({ "src/a.ts": "export const a = 1;\n" });
});
afterEach(async () => {
  await server.close();
});
afterAll(cleanupTempDirs);

/** Starts a session with `message`; returns its id and transcript path. */
async function newSession(message: string): Promise<{ id: string; file: string }> {
  const r = await chat(["-p", message, "--json"], { cwd: root, server });
  expect(r.code).toBe(0);
  const start = jsonEvents(r.stdout)[0];
  return { id: String(start?.sessionId), file: String(start?.transcriptPath) };
}

describe("what sessions print cannot act on the terminal", () => {
  test("show: an answer with control sequences and bidi controls is printed inert; --json escapes them and parses back exact", async () => {
    const hostile = "fine\u001b]52;c;ZXZpbA==\u0007 then\u001b[2J\u009b31m and \u202Eevil";
    server.setResponder(() => textStream(hostile));
    const { id } = await newSession("show me");
    const shown = await sessions(["show", id], root);
    expect(shown.code).toBe(0);
    // The OSC 52 clipboard write and the clear-screen are gone; the one-byte CSI and the bidi override are shown.
    expect(shown.stdout).toContain("assistant: fine then<U+009B>31m and <U+202E>evil");
    expect(shown.stdout).not.toMatch(/[\u0007\u001b\u009b\u202e]/);
    const json = await sessions(["show", id, "--json"], root);
    expect(json.stdout).not.toMatch(/[\u0007\u001b\u009b\u202e]/);
    expect(json.stdout).toContain("\\u009b31m");
    const answer = json.stdout.trim().split("\n").map((line) => JSON.parse(line) as { kind: string; text?: string }).find((r) => r.kind === "assistant");
    expect(answer?.text).toBe(hostile);
  });
});

describe("sessions list", () => {
  test("with none yet: says how to start one, exit 0", async () => {
    const r = await sessions(["list"], root);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("no sessions");
    expect(r.stdout).toContain("valarmind chat");
  });

  test("one line per session with its turns and first message; --json too", async () => {
    const a = await newSession("first session's opening message");
    expect((await chat(["--continue", "-p", "a second turn"], { cwd: root, server })).code).toBe(0);
    const b = await newSession("another session");

    const r = await sessions(["list"], root);
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split("\n");
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^id\s+started\s+turns\s+first message$/);
    // Oldest first, to the millisecond (two sessions of the same second keep their start order).
    expect(lines.slice(1).map((line) => line.split(" ")[0])).toEqual([a.id, b.id]);
    const rowOf = (id: string) => lines.slice(1).find((line) => line.startsWith(`${id} `)) ?? "";
    expect(rowOf(a.id)).toMatch(/\s2\s+first session's opening message$/);
    expect(rowOf(b.id)).toMatch(/\s1\s+another session$/);

    const json = await sessions(["list", "--json"], root);
    const listed = JSON.parse(json.stdout) as Array<{ id: string; turns: number; firstMessage: string; file: string }>;
    expect(listed.map((s) => [s.id, s.turns, s.firstMessage, s.file])).toEqual([
      [a.id, 2, "first session's opening message", a.file],
      [b.id, 1, "another session", b.file],
    ]);
  });
});

describe("sessions show", () => {
  test("the turns with tool summaries and usage; --raw adds the full tool output", async () => {
    server.setResponder(undefined);
    server.enqueue(toolCallStream([{ name: "read_file", arguments: { path: "src/a.ts" } }], { text: "Reading." }), textStream("a is 1."));
    const s = await newSession("what is a?");
    const r = await sessions(["show", s.id.slice(0, 5)], root);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`session ${s.id}`);
    expect(r.stdout).toContain("[turn 1] user: what is a?");
    expect(r.stdout).toContain("tool read_file");
    expect(r.stdout).toContain("assistant: a is 1.");
    expect(r.stdout).toMatch(/turn 1 ended: completed, 2 model call\(s\) · input \d+/);
    const raw = await sessions(["show", s.id, "--raw"], root);
    expect(raw.stdout).toContain("export const a = 1;");
  });

  test("--json prints the records exactly as stored", async () => {
    const s = await newSession("hello");
    const r = await sessions(["show", s.id, "--json"], root);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(readFileSync(s.file, "utf8").split("\n").filter(Boolean).map((l) => `${JSON.stringify(JSON.parse(l))}\n`).join(""));
  });

  test("a failed turn shows its error; a torn last line is mentioned", async () => {
    server.setResponder(undefined);
    server.enqueue(textStream("fine"));
    const s = await newSession("ok turn");
    // Nothing scripted: the server answers 400 fake_script_exhausted, which the turn reports.
    const failed = await chat(["--continue", "-p", "failing turn"], { cwd: root, server });
    expect(failed.code).toBe(1);
    appendFileSync(s.file, '{"v":1,"kind":"user","tu');
    const r = await sessions(["show", s.id], root);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("[turn 2] user: failing turn");
    expect(r.stdout).toContain("note (error:bad_request)");
    expect(r.stdout).toContain("turn 2 ended: error");
    expect(r.stdout).toContain("the last line is incomplete");
  });

  test("an unknown id is a usage error naming the list command", async () => {
    await newSession("hello");
    const r = await sessions(["show", "zzzz9"], root);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("no session 'zzzz9'");
    expect(r.stderr).toContain("valarmind sessions list");
  });
});
