/**
 * Issue 10, items 3 and 6: bad input met by the CLI. Each case runs the real CLI and asserts the
 * exit code, a message that names the problem (never a stack trace), and that files are kept.
 */
import { afterAll, afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { emptyState } from "../../src/state/empty-state.ts";
import { cleanupTempDirs, makeTempDir, runCli } from "../support/cli.ts";
import { startFakeResponsesServer, textStream, type FakeResponsesServer } from "../support/fake-responses-server.ts";
import { makeGitWorkspace } from "../agent/support/agent-harness.ts";
import { chat, jsonEvents } from "../agent/support/cli-chat.ts";

afterAll(cleanupTempDirs);

const STATE = ".valarmind/memory/state.json";
const fixed = new Date("2026-03-01T08:00:00.000Z");

let server: FakeResponsesServer;
beforeEach(() => {
  server = startFakeResponsesServer();
});
afterEach(async () => {
  await server.close();
});

async function initialized(): Promise<string> {
  const dir = await makeGitWorkspace();
  const r = await runCli(["init"], { cwd: dir });
  if (r.code !== 0) throw new Error(`init failed: ${r.stderr}`);
  return dir;
}

async function memoryFiles(dir: string): Promise<string[]> {
  return (await readdir(join(dir, ".valarmind/memory"))).filter((n) => n.startsWith("state.json")).sort();
}

function expectNoTrace(stderr: string): void {
  expect(stderr).not.toContain("unexpected error");
  expect(stderr).not.toMatch(/\n\s+at /);
}

const INVALID: Record<string, string> = {
  "an extra field": JSON.stringify({ ...emptyState(fixed), extra: true }),
  "a missing field": JSON.stringify((({ goal: _goal, ...rest }) => rest)(emptyState(fixed))),
  "schema_version 0": JSON.stringify({ ...emptyState(fixed), schema_version: 0 }),
  "not JSON": '{"goal": "half',
};

describe("an invalid state.json: read-only commands report it and leave it", () => {
  for (const [name, content] of Object.entries(INVALID)) {
    test(`${name}: state show, compact --check, compact, prompt --dry-run, sessions list exit 2 (sessions 0) and move nothing`, async () => {
      const dir = await initialized();
      await writeFile(join(dir, STATE), content);
      for (const args of [["state", "show"], ["state", "show", "--json"], ["compact", "--check"], ["compact"], ["prompt", "--dry-run", "hi"]]) {
        const r = await runCli(args, { cwd: dir });
        expect({ args, code: r.code }).toEqual({ args, code: 2 });
        expect(r.stderr).toContain(join(dir, STATE));
        expect(r.stderr).toContain("Nothing was changed");
        expectNoTrace(r.stderr);
      }
      expect((await runCli(["sessions", "list"], { cwd: dir })).code).toBe(0);
      expect(await memoryFiles(dir)).toEqual(["state.json"]);
      expect(await readFile(join(dir, STATE), "utf8")).toBe(content);
    });
  }

  test("schema_version 0 says plainly that it is not a valarmind state file", async () => {
    const dir = await initialized();
    await writeFile(join(dir, STATE), INVALID["schema_version 0"] ?? "");
    const r = await runCli(["state", "show"], { cwd: dir });
    expect(r.stderr).toContain("not a valarmind state file: its schema_version is 0, and the oldest format valarmind wrote is 1");
  });
});

describe("chat moves an invalid state aside and always says so", () => {
  test("chat -p: a notice on stderr names where the file went; the file is kept", async () => {
    const dir = await initialized();
    await writeFile(join(dir, STATE), INVALID["an extra field"] ?? "");
    server.enqueue(textStream("ok"));
    const r = await chat(["-p", "hello"], { cwd: dir, server });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('unexpected property "extra"');
    expect(r.stderr).toContain("It was kept as");
    const names = await memoryFiles(dir);
    expect(names.some((n) => n.startsWith("state.json.corrupt-"))).toBe(true);
    const aside = names.find((n) => n.startsWith("state.json.corrupt-")) ?? "";
    expect(await readFile(join(dir, ".valarmind/memory", aside), "utf8")).toBe(INVALID["an extra field"] ?? "");
  });

  test("chat -p --json: a notice event", async () => {
    const dir = await initialized();
    await writeFile(join(dir, STATE), INVALID["a missing field"] ?? "");
    server.enqueue(textStream("ok"));
    const r = await chat(["-p", "hello", "--json"], { cwd: dir, server });
    expect(r.code).toBe(0);
    const notice = jsonEvents(r.stdout).find((e) => e.type === "notice" && String(e.message).includes("It was kept as"));
    expect(notice?.message).toContain('missing required property "goal"');
  });

  test("a state from a newer valarmind: chat exits 2 (usage), the file untouched, no request sent", async () => {
    const dir = await initialized();
    const newer = JSON.stringify({ ...emptyState(fixed), schema_version: 9 });
    await writeFile(join(dir, STATE), newer);
    const r = await chat(["-p", "hello"], { cwd: dir, server });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("written by a newer valarmind (schema_version 9");
    expectNoTrace(r.stderr);
    expect(await readFile(join(dir, STATE), "utf8")).toBe(newer);
    expect(server.requests).toHaveLength(0);
  });
});

describe("item 6: stack traces and wrong exit codes", () => {
  test("-C with a directory that does not exist: exit 2, names it", async () => {
    const dir = await makeTempDir();
    const r = await runCli(["-C", join(dir, "nope"), "state", "show"], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`valarmind: -C ${join(dir, "nope")}: cannot change into it (no such directory)\n  Pass an existing directory to -C / --cwd.\n`);
  });

  test("task add --file '': a usage error (exit 2), not 'This is a bug'; nothing written", async () => {
    const dir = await initialized();
    const before = await readFile(join(dir, STATE), "utf8");
    for (const args of [["state", "task", "add", "x", "--file", ""], ["state", "task", "add", "x", "--file", "a.ts", "--file", " "]]) {
      const r = await runCli(args, { cwd: dir });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain("a task's file path must not be empty");
      expect(r.stderr).not.toContain("This is a bug");
    }
    await runCli(["state", "task", "add", "y"], { cwd: dir });
    const update = await runCli(["state", "task", "update", "T-1", "--file", ""], { cwd: dir });
    expect(update.code).toBe(2);
    expect(JSON.parse(await readFile(join(dir, STATE), "utf8")).tasks_open[0].files).toBeUndefined();
    expect(before).not.toBe("");
  });

  test("a lone surrogate in state.json: the state still reaches the prompt, compact works, the user is told where", async () => {
    const dir = await initialized();
    const raw = JSON.stringify({ ...emptyState(fixed), goal: "ship PLACEHOLDER today", now: "fine" }).replace("PLACEHOLDER", "\\ud800");
    await writeFile(join(dir, STATE), raw);
    const show = await runCli(["state", "show"], { cwd: dir });
    expect(show.code).toBe(0);
    expect(show.stdout).toContain("goal: ship \ufffd today");
    expect(show.stderr).toContain("/goal: a lone UTF-16 surrogate");
    const compact = await runCli(["compact"], { cwd: dir });
    expect(compact.code).toBe(0);
    expectNoTrace(compact.stderr);
    expect(await readFile(join(dir, ".valarmind/memory/state.toon"), "utf8")).toContain("ship \ufffd today");
    const prompt = await runCli(["prompt", "--dry-run", "hi", "--show-prompt"], { cwd: dir });
    expect(prompt.code).toBe(0);
    expect(prompt.stdout).toContain("ship \ufffd today");
    expect(await readFile(join(dir, STATE), "utf8")).toBe(raw); // reading did not rewrite it
  });

  test("an HTML page with status 200 is not reported as a cut stream: it names the URL and says it is not a Responses API server", async () => {
    const html = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("<!doctype html><html><body>Welcome</body></html>", { headers: { "content-type": "text/html" } }) });
    try {
      const dir = await initialized();
      const baseURL = `http://127.0.0.1:${html.port}/v1`;
      const r = await chat(["-p", "hello"], { cwd: dir, env: { OPENAI_BASE_URL: baseURL, OPENAI_API_KEY: "sk-test" } });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`${baseURL}/responses answered, but not with a Responses API event stream`);
      expect(r.stderr).toContain("It is not an OpenAI Responses API server");
      expect(r.stderr).not.toContain("ended before the response finished");
    } finally {
      await html.stop(true);
    }
  });

  test("environment variables with a wrong value are named, with the allowed values (exit 2)", async () => {
    const dir = await initialized();
    const cases: [Record<string, string>, string][] = [
      [{ VALARMIND_APPROVALS: "yolo" }, 'environment variable VALARMIND_APPROVALS="yolo" (setting approvals): must be one of "suggest", "auto-edit", "full-auto"'],
      [{ VALARMIND_SANDBOX: "none" }, 'environment variable VALARMIND_SANDBOX="none" (setting sandbox): must be one of "workspace-write", "read-only", "off"'],
      [{ VALARMIND_REASONING_EFFORT: "max" }, 'environment variable VALARMIND_REASONING_EFFORT="max" (setting reasoningEffort): must be one of "none", "minimal", "low", "medium", "high"'],
      [{ MAX_CONTEXT_TOKENS: "12" }, "environment variable MAX_CONTEXT_TOKENS=12 (setting maxContextTokens):"],
    ];
    for (const [env, message] of cases) {
      const r = await chat(["-p", "hello"], { cwd: dir, server, env });
      expect({ env, code: r.code }).toEqual({ env, code: 2 });
      expect(r.stderr).toContain(message);
      expect(r.stderr).not.toContain("Expected union value");
    }
  });

  test("a config file's union setting lists the allowed values; a config file with a BOM is accepted", async () => {
    const dir = await initialized();
    const config = join(dir, ".valarmind/config.json");
    await writeFile(config, JSON.stringify({ overflowPolicy: "random" }));
    const bad = await runCli(["prompt", "--dry-run", "hi"], { cwd: dir });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(`${config}: /overflowPolicy must be one of "fifo", "lru", "priority", "summarize" (got "random")`);
    await writeFile(config, `\ufeff${JSON.stringify({ overflowPolicy: "lru" })}`);
    const ok = await runCli(["prompt", "--dry-run", "hi"], { cwd: dir });
    expect({ code: ok.code, stderr: ok.stderr.includes("not valid JSON") }).toEqual({ code: 0, stderr: false });
  });

  test("chat --budget 1500 (too small for the core rules and tools) is a usage problem: exit 2 with what needs how much", async () => {
    const dir = await initialized();
    const r = await chat(["-p", "hello", "--budget", "1500"], { cwd: dir, server });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("over the budget of 1500 (MAX_CONTEXT_TOKENS)");
    expect(r.stderr).toContain("--budget");
    expect(server.requests).toHaveLength(0);
  });

  test("a closed stdout (--json | head -n 1) ends quietly with exit 0, no trace", async () => {
    const dir = await initialized();
    server.enqueue(textStream(Array.from({ length: 400 }, (_, i) => `word${i} `).join("")));
    const { BUN_FLAGS, CLI_ENTRY } = await import("../support/cli.ts");
    const { chatEnv } = await import("../agent/support/cli-chat.ts");
    const errFile = join(dir, "stderr.txt");
    const command = `"${process.execPath}" ${BUN_FLAGS.map((f) => `"${f}"`).join(" ")} "${CLI_ENTRY}" chat -p hello --json 2>"${errFile}" | head -n 1 >/dev/null; echo "\${PIPESTATUS[0]}"`;
    const env = Object.fromEntries(Object.entries({ ...process.env, NO_COLOR: "1", ...chatEnv({ server }) }).filter((e): e is [string, string] => e[1] !== undefined));
    const child = Bun.spawn(["bash", "-c", command], { cwd: dir, env, stdout: "pipe", stderr: "pipe" });
    const code = (await new Response(child.stdout).text()).trim();
    await child.exited;
    const stderr = await readFile(errFile, "utf8");
    expect({ code, stderr }).toEqual({ code: "0", stderr: "" });
  });
});

describe("a .valarmind/ that cannot be written", () => {
  const setpriv = Bun.which("setpriv");
  test.skipIf(process.getuid?.() !== 0 || setpriv === null)("compact as another user: exit 1 naming the file, no trace", async () => {
    const dir = await initialized();
    await mkdir(join(dir, "home"), { recursive: true });
    const { chmod, rm } = await import("node:fs/promises");
    await rm(join(dir, ".valarmind/memory/state.toon"));
    for (const d of [dir, join(dir, ".valarmind"), join(dir, ".valarmind/memory")]) await chmod(d, 0o755);
    await chmod(join(dir, STATE), 0o644);
    const { BUN_FLAGS, CLI_ENTRY } = await import("../support/cli.ts");
    const child = Bun.spawn([setpriv ?? "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", process.execPath, ...BUN_FLAGS, CLI_ENTRY, "compact"], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? "", HOME: join(dir, "home"), XDG_CONFIG_HOME: join(dir, "home"), VALARMIND_CACHE_DIR: join(dir, "home"), NO_COLOR: "1" },
      stdout: "pipe",
      stderr: "pipe",
    });
    const [stderr, code] = await Promise.all([new Response(child.stderr).text(), child.exited]);
    expect(code).toBe(1);
    // compact, like every command that writes under .valarmind/, first makes sure the directory is
    // private; another user cannot, and is told so with what to run.
    expect(stderr).toContain(`${join(dir, ".valarmind")} is readable by other users and could not be made private`);
    expect(stderr).toContain(`chmod 700 ${join(dir, ".valarmind")}`);
    expectNoTrace(stderr);
    expect(existsSync(join(dir, ".valarmind/memory/state.toon"))).toBe(false);
  });
});
