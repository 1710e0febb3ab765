/**
 * `valarmind chat` headless, spawned for real against the fake Responses server: the answer alone
 * on stdout, --json events, stdin, --continue / --resume, usage errors (exit 2), approvals flags,
 * Ctrl+C (exit 130), and no API key on disk.
 */
import { afterAll, afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanupTempDirs, makeTempDir, readUntil } from "../support/cli.ts";
import {
  gatedAfter,
  conversationMessages,
  lastUserText,
  startFakeResponsesServer,
  textStream,
  toolCallStream,
  type FakeResponsesServer,
} from "../support/fake-responses-server.ts";
import { makeGitWorkspace } from "../agent/support/agent-harness.ts";
import { chat, jsonEvents, latestRecords, spawnChat } from "../agent/support/cli-chat.ts";

let server: FakeResponsesServer;
let root: string;
beforeEach(async () => {
  server = startFakeResponsesServer();
  root = await makeGitWorkspace({ "src/app.ts": "export const port = 4173;\n", "README.md": "# demo\n" });
});
afterEach(async () => {
  await server.close();
});
afterAll(cleanupTempDirs);

/** The event types `--json` may print (docs/agent.md). */
const DOCUMENTED = new Set([
  "session_start",
  "turn_start",
  "request_built",
  "text_delta",
  "reasoning_delta",
  "tool_call_start",
  "approval_request",
  "tool_call_end",
  "usage",
  "retry",
  "memory_updated",
  "notice",
  "window_slid",
  "error",
  "turn_end",
]);

describe("chat -p", () => {
  test("prints only the final answer on stdout and exits 0", async () => {
    server.enqueue(textStream("The answer is **42**."));
    const r = await chat(["-p", "what is the answer?"], { cwd: root, server });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("The answer is **42**.\n");
    expect(r.stderr).toBe("");
    expect(lastUserText(server.requests[0]?.body ?? {})).toBe("what is the answer?");
    expect(latestRecords(root).map((rec) => rec.kind)).toEqual(["user", "state_snapshot", "turn_context", "assistant", "turn_end"]);
  });

  test("after tool calls only the last answer is printed; --verbose shows the calls on stderr", async () => {
    server.enqueue(toolCallStream([{ name: "read_file", arguments: { path: "src/app.ts" } }], { text: "Reading the file." }), textStream("Port 4173."));
    const r = await chat(["-p", "which port?", "--verbose"], { cwd: root, server });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("Port 4173.\n");
    expect(r.stderr).toContain("read_file");
    expect(r.stderr).toContain("read src/app.ts");
  });

  test("--json prints one valid JSON object per line, documented types only, in turn order", async () => {
    server.enqueue(toolCallStream([{ name: "read_file", arguments: { path: "README.md" } }]), textStream("It is a demo."));
    const r = await chat(["-p", "what is this repo?", "--json"], { cwd: root, server });
    expect(r.code).toBe(0);
    const events = jsonEvents(r.stdout);
    for (const event of events) expect(DOCUMENTED.has(event.type)).toBe(true);
    const types = events.map((e) => e.type);
    expect(types[0]).toBe("session_start");
    expect(types[1]).toBe("turn_start");
    expect(types.at(-1)).toBe("turn_end");
    expect(types).toEqual(expect.arrayContaining(["request_built", "usage", "tool_call_start", "tool_call_end", "text_delta"]));
    expect(events.at(-1)).toMatchObject({ type: "turn_end", turn: 1, text: "It is a demo.", stopReason: "completed" });
    const built = events.find((e) => e.type === "request_built");
    expect(built?.manifest).toMatchObject({ path: expect.stringContaining("manifests"), totalTokens: expect.any(Number) });
    const start = events[0];
    expect(typeof start?.transcriptPath === "string" && existsSync(start.transcriptPath)).toBe(true);
  });

  test("-p - reads the message from standard input", async () => {
    server.enqueue(textStream("got it"));
    const message = "a message\nover two lines from a pipe";
    const r = await chat(["-p", "-"], { cwd: root, server, stdin: message });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("got it\n");
    expect(lastUserText(server.requests[0]?.body ?? {})).toBe(message);
  });

  test("--continue continues the latest session; --resume ID picks one", async () => {
    server.setResponder((body) => textStream(`echo: ${lastUserText(body)}`));
    expect((await chat(["-p", "first session"], { cwd: root, server })).code).toBe(0);
    const firstId = String(jsonEvents((await chat(["--continue", "-p", "again", "--json"], { cwd: root, server })).stdout)[0]?.sessionId);
    const conversation = conversationMessages(server.requests[1]?.body ?? {});
    expect(conversation.map((i) => i.content)).toEqual(["first session", "echo: first session", "again"]);
    expect(server.requests[1]?.body.prompt_cache_key).toBe(server.requests[0]?.body.prompt_cache_key ?? "");

    expect((await chat(["-p", "second session"], { cwd: root, server })).code).toBe(0);
    const r = await chat(["--resume", firstId, "-p", "back to the first", "--json"], { cwd: root, server });
    expect(r.code).toBe(0);
    expect(jsonEvents(r.stdout)[0]).toMatchObject({ type: "session_start", sessionId: firstId, resumed: true });
    expect(lastUserText(server.requests[3]?.body ?? {})).toBe("back to the first");
    expect(JSON.stringify(server.requests[3]?.body.input)).toContain("first session");
    expect(JSON.stringify(server.requests[3]?.body.input)).not.toContain("second session");
  });

  test("--continue after a crash: the torn line is kept in a note and the earlier turns are sent again", async () => {
    server.setResponder((body) => textStream(`echo: ${lastUserText(body)}`));
    await chat(["-p", "before the crash"], { cwd: root, server });
    const sessionsDir = join(root, ".valarmind", "sessions");
    const file = join(sessionsDir, readdirSync(sessionsDir).find((n) => n.endsWith(".jsonl")) ?? "");
    const torn = '{"v":1,"kind":"assistant","turn":2,"step":1,"text":"cut off mid-wr';
    await Bun.write(file, `${readFileSync(file, "utf8")}${JSON.stringify({ v: 1, kind: "user", ts: new Date().toISOString(), turn: 2, text: "the crashed turn" })}\n${torn}`);

    const r = await chat(["--continue", "-p", "after the crash"], { cwd: root, server });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("echo: after the crash\n");
    expect(r.stderr).toContain("the last line was incomplete");
    expect(r.stderr).toContain("turn 2");
    const list = latestRecords(root);
    expect(list.find((rec) => rec.kind === "note" && rec.what === "torn_line_recovered")).toMatchObject({ text: torn });
    const users = conversationMessages(server.requests[1]?.body ?? {}).filter((i) => i.role === "user").map((i) => i.content);
    expect(users).toEqual(["before the crash", "the crashed turn", "after the crash"]);
  });
});

describe("usage errors exit 2 with a hint", () => {
  test("chat without a terminal", async () => {
    const r = await chat([], { cwd: root, server });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("needs a terminal");
    expect(r.stderr).toContain("valarmind chat -p MESSAGE");
    expect(server.requests).toHaveLength(0);
  });

  test("--continue with no session yet", async () => {
    const r = await chat(["--continue", "-p", "hi"], { cwd: root, server });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("no session to continue");
    expect(r.stderr).toContain("without --continue");
    expect(server.requests).toHaveLength(0);
  });

  test.each([
    [["--resume", "nope42", "-p", "hi"], "no session 'nope42'"],
    [["-p", "   "], "non-empty MESSAGE"],
    [["--json"], "--json needs -p"],
    [["--continue", "--resume", "abcd", "-p", "x"], "either --continue or --resume"],
    [["--approvals", "yolo", "-p", "x"], "--approvals must be one of"],
    [["--budget", "12", "-p", "x"], "--budget must be an integer"],
  ])("chat %p", async (args, fragment) => {
    const r = await chat(args, { cwd: root, server });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(fragment);
    expect(server.requests).toHaveLength(0);
  });

  test("-p - with empty standard input", async () => {
    const r = await chat(["-p", "-"], { cwd: root, server, stdin: "" });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("standard input was empty");
  });
});

describe("approval flags without a terminal", () => {
  const writeThenShell = () =>
    server.enqueue(
      toolCallStream([{ name: "write_file", arguments: { path: "notes.md", content: "hello\n" } }]),
      toolCallStream([{ name: "run_shell", arguments: { command: "echo ran > shell.txt" } }]),
      textStream("done"),
    );

  test("default (suggest): both refused, the turn still completes (exit 0), stderr says so", async () => {
    writeThenShell();
    const r = await chat(["-p", "write and run"], { cwd: root, server });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("write_file: denied");
    expect(r.stderr).toContain("run_shell: denied");
    expect(existsSync(join(root, "notes.md"))).toBe(false);
    expect(existsSync(join(root, "shell.txt"))).toBe(false);
  });

  test("--approvals auto-edit: the write happens, the shell command does not", async () => {
    writeThenShell();
    const r = await chat(["-p", "write and run", "--approvals", "auto-edit"], { cwd: root, server });
    expect(r.code).toBe(0);
    expect(readFileSync(join(root, "notes.md"), "utf8")).toBe("hello\n");
    expect(existsSync(join(root, "shell.txt"))).toBe(false);
  });

  test("--yes: both happen", async () => {
    writeThenShell();
    const r = await chat(["-p", "write and run", "--yes"], { cwd: root, server });
    expect(r.code).toBe(0);
    expect(readFileSync(join(root, "notes.md"), "utf8")).toBe("hello\n");
    expect(readFileSync(join(root, "shell.txt"), "utf8")).toBe("ran\n");
  });
});

describe("interrupt and secrets", () => {
  test("SIGINT mid-stream: exit 130, the turn recorded as aborted with the partial text", async () => {
    const { response, gate } = gatedAfter(textStream("partial words then more"), 6);
    server.enqueue(response);
    const child = spawnChat(["-p", "long answer please", "--json"], { cwd: root, server });
    await readUntil(child.stdout, (text) => text.includes('"delta":" words"'));
    child.kill("SIGINT");
    expect(await child.exited).toBe(130);
    gate.release();
    const list = latestRecords(root);
    expect(list.find((rec) => rec.kind === "assistant")).toMatchObject({ text: "partial words" });
    expect(list.at(-1)).toMatchObject({ kind: "turn_end", stop_reason: "aborted" });
  });

  test("commands the agent runs see the user's NODE_ENV, not the production build's setting", async () => {
    // bin/valarmind defines NODE_ENV as "production" in the code for React; a shell command that
    // inherited it would, say, make `npm install` skip devDependencies. The user passes NODE_ENV
    // on to commands (user settings shellEnv); what they have, or not, is what a command sees.
    const xdg = await makeTempDir("valarmind-xdg-");
    mkdirSync(join(xdg, "valarmind"), { recursive: true });
    writeFileSync(join(xdg, "valarmind", "config.json"), JSON.stringify({ shellEnv: ["NODE_ENV"] }));
    for (const [given, shown] of [[undefined, "[unset]"], ["development", "[development]"]] as const) {
      server.requests.length = 0;
      server.enqueue(toolCallStream([{ name: "run_shell", arguments: { command: 'echo "[${NODE_ENV-unset}]"' } }]), textStream("Done."));
      const r = await chat(["-p", "which NODE_ENV?", "--yes"], { cwd: root, server, env: { NODE_ENV: given, XDG_CONFIG_HOME: xdg } });
      expect(r.code).toBe(0);
      expect(JSON.stringify(server.requests[1]?.body.input)).toContain(shown);
    }
  });

  test("no API key reaches disk, even when the user, a file the agent reads and the model repeat it", async () => {
    const key = `sk-test-${"Zq8".repeat(20)}`;
    await Bun.write(join(root, "deploy.env"), `OPENAI_API_KEY=${key}\n`);
    server.enqueue(
      toolCallStream(
        [
          { name: "read_file", arguments: { path: "deploy.env" } },
          { name: "run_shell", arguments: { command: "echo key is [$OPENAI_API_KEY]" } },
        ],
        { text: `I will check ${key}` },
      ),
      textStream(`Your key ${key} works.`),
    );
    const r = await chat(["-p", `is ${key} valid?`, "--yes"], { cwd: root, server, env: { OPENAI_API_KEY: key } });
    expect(r.code).toBe(0);
    expect(server.requests[0]?.headers.authorization).toBe(`Bearer ${key}`);
    // The agent really handled the key (so the check below means something); shell commands never get it.
    const sent = JSON.stringify(server.requests[1]?.body.input);
    expect(sent).toContain(`OPENAI_API_KEY=${key}`);
    expect(sent).toContain("key is []");
    const files = (readdirSync(join(root, ".valarmind"), { recursive: true }) as string[]).map((rel) => join(root, ".valarmind", rel));
    const checked = files.filter((file) => statSync(file).isFile());
    expect(checked.length).toBeGreaterThanOrEqual(3); // the transcript and a manifest per model call
    for (const file of checked) expect(readFileSync(file, "utf8")).not.toContain(key);
    expect(latestRecords(root).some((rec) => JSON.stringify(rec).includes("[redacted"))).toBe(true);
  });
});
