/**
 * Issue 10, items 5 and 8: what a newcomer meets in the first minutes, and a blocked task's note.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { mkdir, readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { helpOutput, SLASH_CATALOG } from "../../src/agent/slash-catalog.ts";
import { filterCommands } from "../../src/ui/input/completion.ts";
import { cleanupTempDirs, makeTempDir, runCli } from "../support/cli.ts";
import { startFakeResponsesServer, textStream } from "../support/fake-responses-server.ts";
import { makeGitWorkspace } from "../agent/support/agent-harness.ts";
import { chat } from "../agent/support/cli-chat.ts";

afterAll(cleanupTempDirs);

describe("the first commands", () => {
  test("compact --check passes right after init", async () => {
    const dir = await makeTempDir();
    const init = await runCli(["init"], { cwd: dir });
    expect(init.stdout).toContain("wrote .valarmind/memory/state.toon");
    const check = await runCli(["compact", "--check"], { cwd: dir });
    expect({ code: check.code, stderr: check.stderr }).toEqual({ code: 0, stderr: "" });
  });

  test("init in a subdirectory of a git repository says where the workspace is and creates nothing; --here nests on purpose", async () => {
    const root = await makeGitWorkspace();
    const sub = join(root, "packages", "app");
    await mkdir(sub, { recursive: true });
    const r = await runCli(["init"], { cwd: sub });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${sub} is inside the workspace ${root}`);
    expect(r.stderr).toContain("'valarmind init --here'");
    expect(existsSync(join(sub, ".valarmind"))).toBe(false);
    expect(existsSync(join(sub, "VALARMIND.md"))).toBe(false);
    const here = await runCli(["init", "--here"], { cwd: sub });
    expect(here.code).toBe(0);
    expect(existsSync(join(sub, ".valarmind/memory/state.json"))).toBe(true);
  });

  test("init in a subdirectory of an initialised folder (no git) refuses too", async () => {
    const root = await makeTempDir();
    expect((await runCli(["init"], { cwd: root })).code).toBe(0);
    const sub = join(root, "docs");
    await mkdir(sub);
    const r = await runCli(["init"], { cwd: sub });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("is inside the workspace");
  });

  test("a chat run without init leaves nothing for git to pick up", async () => {
    const root = await makeGitWorkspace();
    const server = startFakeResponsesServer();
    try {
      server.enqueue(textStream("hi"));
      expect((await chat(["-p", "hello"], { cwd: root, server })).code).toBe(0);
    } finally {
      await server.close();
    }
    expect(existsSync(join(root, ".valarmind/sessions"))).toBe(true);
    const status = Bun.spawnSync(["git", "status", "--porcelain", "--untracked-files=all"], { cwd: root });
    expect(status.stdout.toString()).not.toContain(".valarmind");
    expect(await readFile(join(root, ".valarmind/.gitignore"), "utf8")).toBe("*\n");
  });
});

describe("/help and the completion menu show one slash", () => {
  test("help and completion", () => {
    const lines = helpOutput(SLASH_CATALOG).lines.join("\n");
    expect(lines).toContain("/goal TEXT");
    expect(lines).not.toContain("//");
    expect(filterCommands(SLASH_CATALOG, "").every((c) => c.label.startsWith("/") && !c.label.startsWith("//"))).toBe(true);
  });
});

describe("task block keeps the task's note (ADR-0005)", () => {
  test("blocking and clearing the blocker leaves the note as it was", async () => {
    const dir = await makeTempDir();
    await runCli(["init"], { cwd: dir });
    await runCli(["state", "task", "add", "Wire prompt", "--note", "half done: sections wired"], { cwd: dir });
    const block = await runCli(["state", "task", "block", "T-1", "waiting", "for", "review"], { cwd: dir });
    expect(block.stdout).toBe("task T-1: status open → blocked; added blocker B-1: waiting for review\n");
    const blocked = JSON.parse((await runCli(["state", "show", "--json"], { cwd: dir })).stdout);
    expect(blocked.tasks_open[0]).toMatchObject({ status: "blocked", note: "half done: sections wired" });
    expect(blocked.blockers[0]).toMatchObject({ id: "B-1", text: "waiting for review", task: "T-1" });
    await runCli(["state", "blocker", "clear", "B-1"], { cwd: dir });
    const cleared = JSON.parse((await runCli(["state", "show", "--json"], { cwd: dir })).stdout);
    expect(cleared.tasks_open[0]).toMatchObject({ status: "open", note: "half done: sections wired" });
  });
});

describe("scripts/setup", () => {
  const setup = resolve(import.meta.dir, "../../scripts/setup");
  test("without a key or base URL: says how to try the fake server and, on every run, that valarmind is not on PATH", async () => {
    const home = await makeTempDir();
    const cwd = await makeTempDir();
    const env: Record<string, string> = { HOME: home, PATH: "/usr/bin:/bin", XDG_CONFIG_HOME: join(home, ".config"), NO_COLOR: "1" };
    for (let run = 1; run <= 2; run++) {
      const child = Bun.spawn([setup], { cwd, env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
      const [stderr, code] = await Promise.all([new Response(child.stderr).text(), child.exited]);
      expect({ run, code }).toEqual({ run, code: 0 });
      expect(stderr).toContain("'valarmind' is not on your PATH yet");
      expect(stderr).toContain('export PATH="$HOME/.bun/bin:$PATH"');
      expect(stderr).toContain("scripts/fake-server.ts --port 8787");
      expect(stderr).toContain("OPENAI_BASE_URL=http://127.0.0.1:8787/v1 valarmind chat");
      expect(stderr).not.toContain("OPENAI_API_KEY is not set; export it");
      // The JavaScript bundle is built quietly (ADR 0086).
      expect(stderr).not.toContain("dist/js");
      expect(existsSync(resolve(import.meta.dir, "../../dist/js/main.js"))).toBe(true);
    }
  }, 60_000);
});
