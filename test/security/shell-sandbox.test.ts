/**
 * Issue 9: run_shell in a bubblewrap sandbox, through the registry with the real `bwrap`. A
 * command cannot write outside the workspace or into `.git/`, cannot reach the network, cannot
 * read valarmind's environment (neither its own env nor `/proc/<valarmind>/environ`), leaves
 * nothing running, and its `/tmp` is private. Without bubblewrap, every command asks (full-auto
 * included; headless: refused) unless the user chose `sandbox: "off"`.
 */
import { afterAll, afterEach, beforeAll, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import type { Settings } from "../../src/config/settings-schema.ts";
import { call, makeOutsideDir, makeWorkspace, registryFor, removeWorkspaces, TEST_SETTINGS } from "../tools/temp-workspace.ts";

const API_KEY = "sk-proj-Sandbox0Key1Never2Seen3By4Commands";
const GITHUB_TOKEN = "ghp_Sandbox9Token8Stays7Home6Q5W4E3R2T1";
const AWS_SECRET = "aws-Secret-Sandbox-7h6g5f4e3d2c1b0a";
const MARKER = `valarmind-escape-marker-${process.pid}`;
const saved: Record<string, string | undefined> = {};

type ShellSettings = Pick<Settings, "sandbox" | "network" | "shellEnv">;

function settings(shell: Partial<ShellSettings> = {}) {
  return { ...TEST_SETTINGS, sandbox: "workspace-write" as const, network: false, shellEnv: [] as string[], ...shell };
}

function sandboxed(root: string, shell: Partial<ShellSettings> = {}) {
  return registryFor(root, { settings: settings(shell) });
}

/** Processes whose argv holds the marker (what `setsid` left behind). */
function survivors(): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(MARKER)) found.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return found;
}

const homeDirs: string[] = [];

beforeAll(() => {
  for (const [name, value] of [["OPENAI_API_KEY", API_KEY], ["GITHUB_TOKEN", GITHUB_TOKEN], ["AWS_SECRET_ACCESS_KEY", AWS_SECRET]] as const) {
    saved[name] = process.env[name];
    process.env[name] = value;
  }
});
afterEach(() => {
  for (const pid of survivors()) process.kill(pid, "SIGKILL");
});
afterAll(() => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  for (const dir of homeDirs) rmSync(dir, { recursive: true, force: true });
  removeWorkspaces();
});

test("a sandboxed command writes the workspace but nothing outside it, nor .git/ or .valarmind/", async () => {
  const root = makeWorkspace({ ".git/config": "[core]\n", ".valarmind/config.json": "{}\n" });
  const outside = makeOutsideDir();
  const home = mkdtempSync(join(homedir(), ".valarmind-sandbox-test-"));
  homeDirs.push(home);
  const registry = sandboxed(root);
  const r = await call(registry, "run_shell", {
    command: [
      "echo ok > inside.txt",
      `echo pwned > ${outside}/outside.txt`,
      `echo pwned > ${home}/home.txt`,
      "echo pwned > .git/hooks-pwned",
      "echo pwned > .valarmind/pwned",
      "true",
    ].join("; "),
  });
  expect(r.isError).toBe(false);
  expect(readFileSync(join(root, "inside.txt"), "utf8")).toBe("ok\n");
  expect(existsSync(join(outside, "outside.txt"))).toBe(false);
  expect(existsSync(join(home, "home.txt"))).toBe(false);
  expect(existsSync(join(root, ".git", "hooks-pwned"))).toBe(false);
  expect(existsSync(join(root, ".valarmind", "pwned"))).toBe(false);
  expect(r.forModel).toContain("Read-only file system");
});

test("read-only mode keeps the workspace itself read-only", async () => {
  const root = makeWorkspace({ "a.txt": "a\n" });
  const r = await call(sandboxed(root, { sandbox: "read-only" }), "run_shell", { command: "cat a.txt; echo b > b.txt" });
  expect(r.forModel).toContain("a\n");
  expect(existsSync(join(root, "b.txt"))).toBe(false);
});

test("/tmp inside the sandbox is private", async () => {
  const root = makeWorkspace();
  const name = `/tmp/valarmind-sandbox-tmp-${process.pid}-${Date.now()}`;
  const r = await call(sandboxed(root), "run_shell", { command: `echo x > ${name} && cat ${name}` });
  expect(r.isError).toBe(false);
  expect(existsSync(name)).toBe(false);
});

test("no network unless network: true", async () => {
  const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("reached") });
  try {
    const root = makeWorkspace();
    const command = `exec 3<>/dev/tcp/127.0.0.1/${server.port} && echo CONNECTED || echo REFUSED`;
    const closed = await call(sandboxed(root), "run_shell", { command });
    expect(closed.forModel).toContain("stdout:\nREFUSED");
    const open = await call(sandboxed(root, { network: true }), "run_shell", { command });
    expect(open.forModel).toContain("stdout:\nCONNECTED");
  } finally {
    await server.stop(true);
  }
});

test("a command sees neither valarmind's secrets nor its /proc environ; shellEnv passes a named one", async () => {
  const root = makeWorkspace();
  const command = `env; cat /proc/${process.pid}/environ; cat /proc/$PPID/environ; echo END`;
  const r = await call(sandboxed(root), "run_shell", { command });
  expect(r.forModel).toContain("END");
  for (const secret of [API_KEY, GITHUB_TOKEN, AWS_SECRET]) expect(r.raw).not.toContain(secret);
  expect(r.raw).toContain("PATH=");
  const listed = await call(sandboxed(root, { shellEnv: ["GITHUB_TOKEN"] }), "run_shell", { command: "env" });
  expect(listed.raw).toContain(`GITHUB_TOKEN=${GITHUB_TOKEN}`);
  expect(listed.raw).not.toContain(AWS_SECRET);
});

test("nothing a sandboxed command starts outlives it (setsid included), on exit and on timeout", async () => {
  const root = makeWorkspace();
  const escape = `setsid bash -c 'sleep 300; : ${MARKER}' >/dev/null 2>&1 < /dev/null &`;
  const r = await call(sandboxed(root), "run_shell", { command: `${escape} echo started` });
  expect(r.forModel).toContain("started");
  expect(survivors()).toEqual([]);
  const timed = await call(sandboxed(root), "run_shell", { command: `${escape} sleep 30`, timeout_ms: 300 });
  expect(timed.forModel).toContain("timed out");
  expect(survivors()).toEqual([]);
});

test("without bubblewrap: shell asks even in full-auto, headless refuses, naming how to fix it", async () => {
  const root = makeWorkspace();
  const missing = { bwrapPath: join(root, "no-such-bwrap") };
  const headless = registryFor(root, { settings: settings(), shell: missing });
  const refused = await call(headless, "run_shell", { command: "echo ran > ran.txt" });
  expect(refused.denied).toBe(true);
  expect(refused.forModel).toContain("bubblewrap");
  expect(refused.forModel).toContain('sandbox: "off"');
  expect(existsSync(join(root, "ran.txt"))).toBe(false);

  const warnings: string[] = [];
  const asking = registryFor(root, {
    settings: settings(),
    shell: missing,
    interactive: true,
    ask: async (request) => {
      warnings.push(request.warning ?? "");
      return { kind: "allow_once" };
    },
  });
  const asked = await call(asking, "run_shell", { command: "echo ran > ran.txt" });
  expect(warnings.length).toBe(1);
  expect(warnings[0]).toContain("without a sandbox");
  expect(asked.isError).toBe(false);
  expect(existsSync(join(root, "ran.txt"))).toBe(true);
});

test("sandbox: off runs unsandboxed without asking, with the same clean env, and reports what escaped", async () => {
  const root = makeWorkspace();
  const registry = registryFor(root, { settings: settings({ sandbox: "off" }), shell: { bwrapPath: join(root, "no-such-bwrap") } });
  const r = await call(registry, "run_shell", { command: "env; echo END" });
  expect(r.denied).toBe(false);
  expect(r.forModel).toContain("END");
  for (const secret of [API_KEY, GITHUB_TOKEN, AWS_SECRET]) expect(r.raw).not.toContain(secret);
  // The command waits until the escapee has left the group (it writes up.txt), so the check is not a race.
  const command = `setsid bash -c 'echo up > up.txt; sleep 300; : ${MARKER}' >/dev/null 2>&1 < /dev/null & until [ -s up.txt ]; do sleep 0.01; done; echo started`;
  const escaped = await call(registry, "run_shell", { command });
  expect(escaped.forModel).toContain("still running");
  expect(escaped.forModel).toMatch(/sleep 300/);
});

test("the workspace may live under /tmp and .git/ may be absent", async () => {
  const root = makeWorkspace();
  mkdirSync(join(root, "sub"));
  const r = await call(sandboxed(root), "run_shell", { command: "pwd; echo x > sub/f; cat sub/f" });
  expect(r.isError).toBe(false);
  expect(r.forModel).toContain(root);
});
