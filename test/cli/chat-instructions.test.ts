/**
 * Instruction files as the peers read them (ADR 0079), through the real CLI and the fake Responses
 * server: the user's AGENTS.md, then AGENTS.md from the workspace root down to the current
 * directory (CLAUDE.md where a directory has none), then VALARMIND.md; one stable manifest item
 * each; a symlink out of the workspace refused with a notice; --no-context-files on chat and on
 * prompt --dry-run.
 */
import { afterAll, afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { cleanupTempDirs, makeTempDir, runCli } from "../support/cli.ts";
import { startFakeResponsesServer, textStream, type FakeResponsesServer } from "../support/fake-responses-server.ts";
import { makeGitWorkspace } from "../agent/support/agent-harness.ts";
import { chat, chatEnv, jsonEvents } from "../agent/support/cli-chat.ts";
import type { Manifest } from "../../src/prompt/manifest-schema.ts";

let server: FakeResponsesServer;
let root: string;
let config: string;
beforeEach(async () => {
  server = startFakeResponsesServer();
  server.setResponder(() => textStream("ok"));
  root = await makeGitWorkspace({
    "AGENTS.md": "ROOT-AGENTS: run bun test before you say it works.\n",
    "CLAUDE.md": "ROOT-CLAUDE: never read, the root has an AGENTS.md.\n",
    "pkg/AGENTS.md": "PKG-AGENTS: this package uses tabs.\n",
    "pkg/sub/CLAUDE.md": "SUB-CLAUDE: generated code lives here.\n",
    "other/AGENTS.md": "OTHER-AGENTS: not on the way down.\n",
    "VALARMIND.md": "PROJECT-VALARMIND: keep files small.\n",
    "pkg/sub/x.ts": "export const x = 1;\n",
  });
  config = await makeTempDir("valarmind-user-config-");
  write(join(config, "valarmind", "AGENTS.md"), "USER-AGENTS: answer in British English.\n");
});
afterEach(async () => {
  await server.close();
});
afterAll(cleanupTempDirs);

function write(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

const instructionsOf = (index = 0): string => String(server.requests[index]?.body.instructions ?? "");

/** The manifest of the run's first request, from its `request_built` event. */
function firstManifest(stdout: string): Manifest {
  const built = jsonEvents(stdout).find((e) => e.type === "request_built");
  const path = (built?.manifest as { path?: string } | undefined)?.path;
  if (!path) throw new Error(`no request_built event in:\n${stdout}`);
  return JSON.parse(readFileSync(path, "utf8")) as Manifest;
}

describe("instruction files in chat -p", () => {
  test("the user's AGENTS.md, then the root's, then each directory's down to the current one (CLAUDE.md where there is none), then VALARMIND.md", async () => {
    // HOME is the config's parent here, so the user's file is shown as ~/valarmind/AGENTS.md.
    const r = await chat(["-p", "hello"], { cwd: join(root, "pkg", "sub"), server, env: { XDG_CONFIG_HOME: config, HOME: config } });
    expect(r.code).toBe(0);
    const i = instructionsOf();
    const at = ["<core_rules>", "USER-AGENTS", "ROOT-AGENTS", "PKG-AGENTS", "SUB-CLAUDE", "PROJECT-VALARMIND"].map((marker) => i.indexOf(marker));
    expect(at.every((n) => n >= 0)).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
    expect(i).not.toContain("ROOT-CLAUDE");
    expect(i).not.toContain("OTHER-AGENTS");
    // Each under its path.
    expect(i).toContain('<user_instructions source="~/valarmind/AGENTS.md">\nUSER-AGENTS');
    expect(i).not.toContain(config);
    expect(i).toContain('<agents_instructions source="AGENTS.md">\nROOT-AGENTS');
    expect(i).toContain('<agents_instructions source="pkg/AGENTS.md">\nPKG-AGENTS');
    expect(i).toContain('<agents_instructions source="pkg/sub/CLAUDE.md">\nSUB-CLAUDE');
  });

  test("each file is its own stable manifest item, before the summary; the next turn repeats them unchanged", async () => {
    const r = await chat(["-p", "hello", "--json"], { cwd: join(root, "pkg"), server, env: { XDG_CONFIG_HOME: config } });
    expect(r.code).toBe(0);
    const manifest = firstManifest(r.stdout);
    const instructions = manifest.items.filter((item) => item.placement === "instructions").map((item) => [item.id, item.type, item.region, item.stable]);
    expect(instructions).toEqual([
      ["core_rules", "core_rules", "core", true],
      ["user_instructions", "user_instructions", "user", true],
      ["agents:AGENTS.md", "agents_instructions", "agents", true],
      ["agents:pkg/AGENTS.md", "agents_instructions", "agents", true],
      ["project_instructions", "project_instructions", "project", true],
    ]);
    expect(manifest.regions.slice(0, 6)).toEqual(["tools", "core", "user", "agents", "project", "personal"]);
    const again = await chat(["-p", "and again", "--continue"], { cwd: join(root, "pkg"), server, env: { XDG_CONFIG_HOME: config } });
    expect(again.code).toBe(0);
    expect(instructionsOf(1)).toBe(instructionsOf(0));
  });

  test("a file identical to an earlier one is sent once and recorded as a duplicate", async () => {
    write(join(config, "valarmind", "AGENTS.md"), "ROOT-AGENTS: run bun test before you say it works.\n");
    const r = await chat(["-p", "hello", "--json"], { cwd: root, server, env: { XDG_CONFIG_HOME: config } });
    expect(r.code).toBe(0);
    expect(instructionsOf().match(/ROOT-AGENTS/g)).toHaveLength(1);
    expect(firstManifest(r.stdout).dropped).toContainEqual(expect.objectContaining({ id: "agents:AGENTS.md", reason: "duplicate" }));
  });

  test("an AGENTS.md that is a symlink out of the workspace is refused, never read, and told", async () => {
    const outside = await makeTempDir("valarmind-outside-");
    write(join(outside, "notes.md"), "OUTSIDE-SECRET\n");
    rmSync(join(root, "pkg", "AGENTS.md"));
    symlinkSync(join(outside, "notes.md"), join(root, "pkg", "AGENTS.md"));
    write(join(root, "pkg", "CLAUDE.md"), "PKG-CLAUDE: must not replace a refused AGENTS.md.\n");

    const r = await chat(["-p", "hello", "--json"], { cwd: join(root, "pkg"), server, env: { XDG_CONFIG_HOME: config } });
    expect(r.code).toBe(0);
    expect(server.requests[0]?.raw).not.toContain("OUTSIDE-SECRET");
    expect(instructionsOf()).not.toContain("PKG-CLAUDE");
    expect(instructionsOf()).toContain("ROOT-AGENTS");
    const notices = jsonEvents(r.stdout).filter((e) => e.type === "notice" && e.code === "instruction_file_refused");
    expect(notices).toHaveLength(1);
    expect(String(notices[0]?.message)).toContain("pkg/AGENTS.md was not read");
    expect(String(notices[0]?.message)).toContain("outside the workspace");
    expect(firstManifest(r.stdout).dropped).toContainEqual(expect.objectContaining({ id: "agents:pkg/AGENTS.md", reason: "refused_unsafe_file" }));
    // Headless text mode says it on stderr.
    const plain = await chat(["-p", "hello"], { cwd: join(root, "pkg"), server, env: { XDG_CONFIG_HOME: config } });
    expect(plain.stderr).toContain("pkg/AGENTS.md was not read");
  });

  test("in an untrusted folder the repository's AGENTS.md is read, as VALARMIND.md is (only project settings are ignored)", async () => {
    write(join(root, ".valarmind", "config.json"), JSON.stringify({ model: "repo-chosen-model" }));
    const r = await chat(["-p", "hello"], { cwd: root, server, env: { XDG_CONFIG_HOME: config } });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("ignoring .valarmind/config.json");
    expect(server.requests[0]?.body.model).not.toBe("repo-chosen-model");
    expect(instructionsOf()).toContain("ROOT-AGENTS");
    expect(instructionsOf()).toContain("PROJECT-VALARMIND");
  });

  test("--no-context-files: only the core rules instruct", async () => {
    const r = await chat(["-p", "hello", "--no-context-files", "--json"], { cwd: join(root, "pkg", "sub"), server, env: { XDG_CONFIG_HOME: config } });
    expect(r.code).toBe(0);
    const i = instructionsOf();
    expect(i.startsWith("<core_rules>")).toBe(true);
    for (const marker of ["USER-AGENTS", "ROOT-AGENTS", "PKG-AGENTS", "SUB-CLAUDE", "PROJECT-VALARMIND"]) expect(i).not.toContain(marker);
    expect(firstManifest(r.stdout).items.filter((item) => item.placement === "instructions").map((item) => item.id)).toEqual(["core_rules"]);
  });
});

describe("instruction files in prompt --dry-run", () => {
  test("listed like a turn's, and gone with --no-context-files", async () => {
    const env = { ...chatEnv({}), XDG_CONFIG_HOME: config };
    const withFiles = await runCli(["prompt", "--dry-run", "hello", "--json"], { cwd: join(root, "pkg"), env });
    expect(withFiles.code).toBe(0);
    const ids = (JSON.parse(withFiles.stdout) as Manifest).items.filter((item) => item.placement === "instructions").map((item) => item.id);
    expect(ids).toEqual(["core_rules", "user_instructions", "agents:AGENTS.md", "agents:pkg/AGENTS.md", "project_instructions"]);
    const report = await runCli(["prompt", "--dry-run", "hello"], { cwd: join(root, "pkg"), env });
    expect(report.stdout).toContain("pkg/AGENTS.md");
    expect(report.stdout).toContain("your AGENTS.md");
    const without = await runCli(["prompt", "--dry-run", "hello", "--json", "--no-context-files"], { cwd: join(root, "pkg"), env });
    expect(without.code).toBe(0);
    expect((JSON.parse(without.stdout) as Manifest).items.filter((item) => item.placement === "instructions").map((item) => item.id)).toEqual(["core_rules"]);
  });
});
