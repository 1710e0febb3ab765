/**
 * The workspace root: the nearest git work tree (or a folder `valarmind init` set up) wins; a
 * `.valarmind/` left in an ancestor never takes over a repository below it; $HOME and / are never
 * a workspace unless `valarmind init` ran there.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { findWorkspaceRoot } from "../../src/config/paths.ts";
import { UsageError } from "../../src/errors.ts";
import { chat } from "../agent/support/cli-chat.ts";
import { cleanupTempDirs, makeTempDir, runCli } from "../support/cli.ts";
import { startFakeResponsesServer, textStream, toolCallStream, toolOutputsThisTurn } from "../support/fake-responses-server.ts";

afterAll(cleanupTempDirs);

async function tree(): Promise<{ home: string; repo: string }> {
  const home = realpathSync(await makeTempDir("valarmind-home-"));
  const repo = join(home, "proj");
  mkdirSync(join(repo, "src", "deep"), { recursive: true });
  Bun.spawnSync(["git", "init", "-q", repo]);
  mkdirSync(join(home, ".ssh"));
  writeFileSync(join(home, ".ssh", "id_rsa"), "-----BEGIN OPENSSH PRIVATE KEY----- home-secret\n");
  return { home, repo };
}

describe("findWorkspaceRoot", () => {
  test("an ancestor .valarmind/ (even one init set up) never takes over a git repository below it", async () => {
    const { home, repo } = await tree();
    mkdirSync(join(home, ".valarmind", "memory", "schemas"), { recursive: true });
    writeFileSync(join(home, ".valarmind", "memory", "schemas", "state.schema.json"), "{}");
    expect(findWorkspaceRoot(join(repo, "src", "deep"), { home })).toBe(repo);
    const outside = realpathSync(await makeTempDir());
    mkdirSync(join(outside, ".valarmind"));
    mkdirSync(join(outside, "repo", "sub"), { recursive: true });
    Bun.spawnSync(["git", "init", "-q", join(outside, "repo")]);
    expect(findWorkspaceRoot(join(outside, "repo", "sub"), { home })).toBe(join(outside, "repo"));
  });

  test("a .valarmind/ that a chat run left (not init) claims only its own folder", async () => {
    const base = realpathSync(await makeTempDir());
    mkdirSync(join(base, ".valarmind"));
    mkdirSync(join(base, "notes"));
    expect(findWorkspaceRoot(base, { home: "/nonexistent-home" })).toBe(base);
    expect(findWorkspaceRoot(join(base, "notes"), { home: "/nonexistent-home" })).toBe(join(base, "notes"));
  });

  test("$HOME and / are refused unless init ran there; a git repository in $HOME does not make it one", async () => {
    const { home } = await tree();
    Bun.spawnSync(["git", "init", "-q", home]); // a dotfiles repository
    expect(() => findWorkspaceRoot(home, { home })).toThrow(UsageError);
    expect(() => findWorkspaceRoot("/", { home })).toThrow(/file system root/);
    mkdirSync(join(home, "scratch"));
    expect(findWorkspaceRoot(join(home, "scratch"), { home })).toBe(join(home, "scratch"));
    mkdirSync(join(home, ".valarmind", "memory", "schemas"), { recursive: true });
    writeFileSync(join(home, ".valarmind", "memory", "schemas", "state.schema.json"), "{}");
    expect(findWorkspaceRoot(home, { home })).toBe(home);
  });
});

describe("through the CLI", () => {
  test("in $HOME, chat and state commands refuse with what to do; init there makes it a workspace", async () => {
    const { home } = await tree();
    const env = { HOME: home, XDG_CONFIG_HOME: join(home, ".config") };
    const r = await runCli(["state", "show"], { cwd: home, env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("your home directory, which is not a valarmind workspace");
    expect(r.stderr).toContain("valarmind init");
    expect(existsSync(join(home, ".valarmind"))).toBe(false);
    const c = await chat(["-p", "hi"], { cwd: home, env });
    expect(c.code).toBe(2);
    expect(existsSync(join(home, ".valarmind"))).toBe(false);
    expect((await runCli(["init"], { cwd: home, env })).code).toBe(0);
    expect((await runCli(["state", "show"], { cwd: home, env })).code).toBe(0);
  });

  test("a .valarmind/ in the parent of a repository does not let the model read the parent's files", async () => {
    const { home, repo } = await tree();
    mkdirSync(join(home, ".valarmind"));
    await using server = startFakeResponsesServer();
    server.setResponder((body) =>
      toolOutputsThisTurn(body).length > 0
        ? textStream("done")
        : toolCallStream([
            { name: "read_file", arguments: { path: ".ssh/id_rsa" } },
            { name: "write_file", arguments: { path: "proj/.git/hooks/pre-commit", content: "#!/bin/sh\n" } },
          ]),
    );
    const r = await chat(["-p", "look"], { cwd: join(repo, "src"), server, env: { HOME: "/nonexistent-home" } });
    expect(r.code).toBe(0);
    const outputs = toolOutputsThisTurn(server.requests[1]?.body ?? {}).map((o) => o.output ?? "");
    expect(outputs[0]).toContain("does not exist");
    expect(outputs[1]).toContain("inside .git/");
    expect(server.requests.map((q) => q.raw).join("")).not.toContain("home-secret");
    expect(existsSync(join(repo, ".valarmind", "sessions"))).toBe(true);
    expect(existsSync(join(home, ".valarmind", "sessions"))).toBe(false);
  });
});
