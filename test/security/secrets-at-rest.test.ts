/**
 * Issue 8, secrets at rest, through the real CLI against the fake Responses server: a secret the
 * agent reads, is told or repeats never reaches a file valarmind writes (transcript, manifests,
 * state.json, state.toon, ADRs, history, recordings); the user's own words are stored and sent
 * unaltered; `.valarmind/` is private (0700 dirs, 0600 files) and never shows up in `git status`.
 * Each case failed before redaction and the private directory existed.
 */
import { afterAll, afterEach, beforeEach, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SessionChatController } from "../../src/cli/chat/chat-controller.ts";
import { workspacePaths } from "../../src/config/paths.ts";
import { ensureValarmindDir } from "../../src/config/valarmind-dir.ts";
import { createRecordingClient } from "../../src/model/recording-client.ts";
import type { ModelRequest } from "../../src/model/types.ts";
import { emptyState } from "../../src/state/empty-state.ts";
import { acquireLock } from "../../src/state/lock.ts";
import { serializeState } from "../../src/state/store.ts";
import { fakeModel, makeGitWorkspace, testSettings } from "../agent/support/agent-harness.ts";
import { chat, latestRecords } from "../agent/support/cli-chat.ts";
import { cleanupTempDirs, runCli } from "../support/cli.ts";
import {
  conversationMessages,
  lastUserText,
  startFakeResponsesServer,
  textStream,
  toolCallStream,
  type FakeResponsesServer,
} from "../support/fake-responses-server.ts";

const GITHUB_TOKEN = "ghp_9fK2LmQx7RtY3vBn8WcZp1HsJd4Ge6Ua0Oi5";
const API_KEY = "sk-proj-Zq81mXv3TtLw9PbY2cRkD4nH7sJfUa6E";
/** Only in a JSON file of the repository, never in valarmind's environment: found by its name in the text. */
const DB_PASSWORD = "Pg-s3cret-Passw0rd-2024";
const GITLAB_TOKEN = "glpat-Zq81mXv3TtLw9PbY2cRk";
const WORDS = "rename risk-assessment-module-refactor, then check the e-mail template";

let server: FakeResponsesServer;
let root: string;
beforeEach(async () => {
  server = startFakeResponsesServer();
  root = await makeGitWorkspace({
    "README.md": "# demo\n",
    ".env": `GITHUB_TOKEN=${GITHUB_TOKEN}\n`,
    "config/app.json": `{\n  "database": { "host": "db", "database_password": "${DB_PASSWORD}" }\n}\n`,
  });
});
afterEach(async () => {
  await server.close();
});
afterAll(cleanupTempDirs);

interface Entry {
  path: string;
  isDir: boolean;
  mode: number;
}

/** Every file and directory under `.valarmind/`, the directory itself included. */
function entriesUnder(dir: string): Entry[] {
  const names = readdirSync(dir, { recursive: true }) as string[];
  return [dir, ...names.map((name) => join(dir, name))].map((path) => {
    const stat = statSync(path);
    return { path, isDir: stat.isDirectory(), mode: stat.mode & 0o777 };
  });
}

function expectNoFileContains(dir: string, secrets: readonly string[]): number {
  const files = entriesUnder(dir).filter((e) => !e.isDir);
  for (const { path } of files) {
    const text = readFileSync(path, "utf8");
    for (const secret of secrets) {
      if (text.includes(secret)) throw new Error(`${path} holds the secret ${secret}`);
    }
  }
  return files.length;
}

describe("no secret reaches a file valarmind writes", () => {
  test("a .env and a JSON config read by read_file, repeated by the model and saved to memory: the model sees them, no file keeps them", async () => {
    server.enqueue(
      toolCallStream([
        { name: "read_file", arguments: { path: ".env" } },
        { name: "read_file", arguments: { path: "config/app.json" } },
      ]),
      toolCallStream([{ name: "memory_set_now", arguments: { now: `deploying with GITHUB_TOKEN=${GITHUB_TOKEN} and ${DB_PASSWORD}` } }], {
        text: `The token is ${GITHUB_TOKEN}.`,
      }),
      textStream(`Done: ${GITHUB_TOKEN} and database_password=${DB_PASSWORD} are set.`),
    );
    const r = await chat(["-p", "check the deploy settings", "--yes"], { cwd: root, server, env: { GITHUB_TOKEN } });
    expect(r.code).toBe(0);
    // The live session is unaltered: the model really got both values (so the check below means something).
    const sent = JSON.stringify(server.requests[1]?.body.input);
    expect(sent).toContain(GITHUB_TOKEN);
    expect(sent).toContain(DB_PASSWORD);
    expect(r.stdout).toContain(GITHUB_TOKEN);

    const files = expectNoFileContains(join(root, ".valarmind"), [GITHUB_TOKEN, DB_PASSWORD]);
    expect(files).toBeGreaterThanOrEqual(5); // .gitignore, the transcript, state.json and a manifest per call
    const stored = JSON.stringify(latestRecords(root));
    expect(stored).toContain("GITHUB_TOKEN=[redacted:GITHUB_TOKEN]");
    expect(stored).toContain('\\"database_password\\": \\"[redacted:database_password]\\"');
    expect(stored).toContain("database_password=[redacted:database_password]");
  });

  test("the model sets the goal to the API key: neither state.json nor state.toon holds it, and both stay valid", async () => {
    server.enqueue(toolCallStream([{ name: "memory_set_goal", arguments: { goal: `ship it with key ${API_KEY}` } }]), textStream("goal set"));
    const r = await chat(["-p", "remember how we ship", "--yes"], { cwd: root, server, env: { OPENAI_API_KEY: API_KEY } });
    expect(r.code).toBe(0);
    const paths = workspacePaths(root);
    const state: unknown = JSON.parse(readFileSync(paths.stateJson, "utf8"));
    expect(state).toMatchObject({ goal: "ship it with key [redacted:OPENAI_API_KEY]" });

    const compact = await runCli(["compact"], { cwd: root, env: { OPENAI_API_KEY: API_KEY } });
    expect(compact.code).toBe(0);
    expect(readFileSync(paths.stateToon, "utf8")).toContain("[redacted:OPENAI_API_KEY]");
    expectNoFileContains(paths.dir, [API_KEY]);
    expect((await runCli(["state", "show"], { cwd: root })).code).toBe(0); // still schema-valid
  });

  test("a state.json written by an older valarmind with a key in it: state.toon never gets the key", async () => {
    const paths = workspacePaths(root);
    mkdirSync(paths.memoryDir, { recursive: true });
    writeFileSync(paths.stateJson, serializeState({ ...emptyState(new Date()), goal: `deploy with ${GITLAB_TOKEN}` }));
    expect((await runCli(["compact"], { cwd: root })).code).toBe(0);
    const toon = readFileSync(paths.stateToon, "utf8");
    expect(toon).toContain("deploy with [redacted:gitlab-token]");
    expect(toon).not.toContain(GITLAB_TOKEN);
  });

  test("an ADR written by memory_record_decision is redacted, in the file and in the diff that was approved", async () => {
    server.enqueue(
      toolCallStream([{ name: "memory_record_decision", arguments: { title: "Deploy from CI", why: `CI holds GITHUB_TOKEN=${GITHUB_TOKEN}.`, write_adr: true } }]),
      textStream("recorded"),
    );
    const r = await chat(["-p", "record the decision", "--yes"], { cwd: root, server });
    expect(r.code).toBe(0);
    const adr = readdirSync(join(root, "docs", "adr"));
    expect(adr).toHaveLength(1);
    const text = readFileSync(join(root, "docs", "adr", adr[0] ?? ""), "utf8");
    expect(text).toContain("GITHUB_TOKEN=[redacted:GITHUB_TOKEN]");
    expect(text).not.toContain(GITHUB_TOKEN);
    expectNoFileContains(join(root, ".valarmind"), [GITHUB_TOKEN]);
  });

  test("the REPL input history keeps the user's words but not a secret typed into it", async () => {
    const controller = await SessionChatController.open({
      root,
      settings: testSettings(),
      model: fakeModel(server),
      interactive: true,
      resume: { kind: "new" },
      warnings: [],
    });
    try {
      await controller.appendHistory(WORDS);
      await controller.appendHistory(`use ${GITLAB_TOKEN} for the push`);
      expect(await controller.loadHistory()).toEqual([WORDS, "use [redacted:gitlab-token] for the push"]);
      const history = workspacePaths(root).historyFile;
      expect(readFileSync(history, "utf8")).not.toContain(GITLAB_TOKEN);
      expect(statSync(history).mode & 0o777).toBe(0o600);
    } finally {
      await controller.close();
    }
  });

  test("a model recording keeps the request's words and drops its secrets; the file is 0600", async () => {
    server.enqueue(textStream(`your token ${GITLAB_TOKEN}`));
    const file = join(root, ".valarmind", "recordings", "call.jsonl");
    const client = createRecordingClient(fakeModel(server), file);
    const request: ModelRequest = {
      model: "gpt-test",
      instructions: "be brief",
      input: [{ type: "message", role: "user", content: `${WORDS} ${GITLAB_TOKEN}` }],
      tools: [],
      prompt_cache_key: "secrets-at-rest",
      store: false,
    };
    for await (const event of client.stream(request)) void event;
    const text = readFileSync(file, "utf8");
    expect(text).toContain(WORDS);
    expect(text).not.toContain(GITLAB_TOKEN);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });
});

describe("the user's words reach the transcript and the model unaltered", () => {
  test("a word containing sk- and a one-letter OPENAI_API_KEY: verbatim on disk, in the request, and after --continue", async () => {
    server.setResponder((body) => textStream(`echo: ${lastUserText(body)}`));
    const env = { OPENAI_API_KEY: "e" };
    expect((await chat(["-p", WORDS], { cwd: root, server, env })).code).toBe(0);
    expect(lastUserText(server.requests[0]?.body ?? {})).toBe(WORDS);
    const first = latestRecords(root);
    expect(first.find((rec) => rec.kind === "user")).toMatchObject({ text: WORDS });
    expect(first.find((rec) => rec.kind === "assistant")).toMatchObject({ text: `echo: ${WORDS}` });

    expect((await chat(["--continue", "-p", "and the next one"], { cwd: root, server, env })).code).toBe(0);
    const conversation = conversationMessages(server.requests[1]?.body ?? {});
    expect(conversation.map((i) => i.content)).toEqual([WORDS, `echo: ${WORDS}`, "and the next one"]);
    expect(JSON.stringify(latestRecords(root))).not.toContain("[redacted");
  });
});

describe(".valarmind/ is private and never committed", () => {
  test.skipIf(process.platform === "win32")("after a chat that writes memory: directories 0700, files 0600", async () => {
    server.enqueue(toolCallStream([{ name: "memory_set_goal", arguments: { goal: "ship" } }]), textStream("ok"));
    expect((await chat(["-p", "set the goal", "--yes"], { cwd: root, server })).code).toBe(0);
    expect((await runCli(["compact"], { cwd: root })).code).toBe(0);
    const entries = entriesUnder(join(root, ".valarmind"));
    expect(entries.filter((e) => e.path.endsWith("state.json") || e.path.endsWith("state.toon"))).toHaveLength(2);
    expect(entries.filter((e) => e.path.includes("manifests") && !e.isDir).length).toBeGreaterThanOrEqual(2);
    for (const entry of entries) expect(`${entry.path} ${entry.mode.toString(8)}`).toBe(`${entry.path} ${entry.isDir ? "700" : "600"}`);
  });

  test.skipIf(process.platform === "win32")("the state lock's directory is private while it is held", async () => {
    const paths = workspacePaths(root);
    ensureValarmindDir(paths, paths.memoryDir);
    const lock = await acquireLock(paths.stateJson);
    try {
      expect(statSync(`${paths.stateJson}.lock`).mode & 0o777).toBe(0o700);
    } finally {
      await lock.release();
    }
  });

  test("ensureValarmindDir creates only below .valarmind/ and reports what it created", () => {
    const paths = workspacePaths(root);
    expect(ensureValarmindDir(paths, paths.schemasDir)).toEqual([paths.dir, paths.memoryDir, paths.schemasDir]);
    expect(ensureValarmindDir(paths, paths.schemasDir)).toEqual([]);
    expect(() => ensureValarmindDir(paths, join(root, "docs"))).toThrow(/is not inside .*\.valarmind/);
    expect(existsSync(join(root, "docs"))).toBe(false);
  });

  test("a plain chat -p in a fresh git repository: .valarmind/.gitignore is *, and git status shows nothing of it", async () => {
    server.enqueue(textStream("hello"));
    expect((await chat(["-p", "hello"], { cwd: root, server })).code).toBe(0);
    expect(readFileSync(join(root, ".valarmind", ".gitignore"), "utf8")).toBe("*\n");
    const status = Bun.spawnSync(["git", "status", "--porcelain", "--untracked-files=all"], { cwd: root });
    expect(status.exitCode).toBe(0);
    const lines = status.stdout.toString().split("\n").filter((line) => line !== "");
    expect(lines).toContain("?? README.md"); // git does see the repository's own files
    expect(lines.filter((line) => line.includes(".valarmind"))).toEqual([]);
  });

  test.skipIf(process.platform === "win32")("an existing .valarmind/ others can read is tightened to 0700; a .gitignore of its own is kept", async () => {
    const dir = join(root, ".valarmind");
    mkdirSync(dir);
    chmodSync(dir, 0o755);
    server.enqueue(textStream("hello"));
    expect((await chat(["-p", "hello"], { cwd: root, server })).code).toBe(0);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(readFileSync(join(dir, ".gitignore"), "utf8")).toBe("*\n");

    writeFileSync(join(dir, ".gitignore"), "sessions/\n");
    chmodSync(dir, 0o775);
    server.enqueue(textStream("again"));
    expect((await chat(["--continue", "-p", "again"], { cwd: root, server })).code).toBe(0);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(readFileSync(join(dir, ".gitignore"), "utf8")).toBe("sessions/\n");
    expect(existsSync(join(dir, "sessions"))).toBe(true);
  });
});
