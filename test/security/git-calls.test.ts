/**
 * valarmind's own git calls (issue 8): a repository obtained as an archive or a shared folder can
 * carry any `.git/config`. Its `core.fsmonitor` and a filter driver's `clean` command would run on
 * every `git status` valarmind makes (each turn), with the user's environment. Here both are
 * scripts that leave a marker file and dump their environment; the fixture first proves that plain
 * git really runs them, then that `readGitInfo` and a real headless turn do not, while the git
 * status still reaches the prompt. Every other executable git lets a repository name is checked
 * against `runGit` with a command that would run it.
 */
import { afterAll, afterEach, beforeEach, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeGitWorkspace } from "../agent/support/agent-harness.ts";
import { chat } from "../agent/support/cli-chat.ts";
import { cleanupTempDirs, makeTempDir } from "../support/cli.ts";
import { inputItems, startFakeResponsesServer, textStream, type FakeResponsesServer } from "../support/fake-responses-server.ts";
import { readGitInfo } from "../../src/prompt/git-info.ts";
import { runGit } from "../../src/git/safe-git.ts";

const SECRET = "sk-proj-GitCallsCanary0123456789abcdef";

let server: FakeResponsesServer;
beforeEach(() => {
  server = startFakeResponsesServer();
});
afterEach(async () => {
  await server.close();
});
afterAll(cleanupTempDirs);

function git(root: string, ...args: string[]): void {
  const r = Bun.spawnSync(["git", "-c", "user.email=t@example.invalid", "-c", "user.name=t", ...args], { cwd: root, stdin: "ignore" });
  if (r.exitCode !== 0) throw new Error(`git ${args.join(" ")} failed in ${root}: ${r.stderr.toString()}`);
}

/** A script that records that it ran (and with which environment) in `dir`, then behaves as `cat`. */
function trap(dir: string, name: string): string {
  const path = join(dir, name);
  writeFileSync(path, `#!/bin/sh\necho "${name} $*" >> "${dir}/ran"\nenv > "${dir}/env-${name}"\nexec cat\n`);
  chmodSync(path, 0o755);
  return path;
}

interface HostileRepo {
  root: string;
  /** Where the traps write; outside the workspace so no tool or status sees it. */
  traps: string;
  marker: string;
}

/**
 * A committed repository whose `.git/config` names an fsmonitor hook and a filter driver (for
 * `*.txt`, via `.gitattributes`), with `notes.txt` modified and `app.txt` stat-dirty so that
 * `git status` must hash it through the clean filter.
 */
async function hostileRepo(): Promise<HostileRepo> {
  const root = await makeGitWorkspace({ "app.txt": "hello\n", "notes.txt": "v1\n", ".gitattributes": "*.txt filter=lfsish\n" });
  git(root, "add", ".");
  git(root, "commit", "-q", "-m", "initial");
  const traps = await makeTempDir("valarmind-traps-");
  const fsmonitor = trap(traps, "fsmonitor");
  const clean = trap(traps, "clean");
  const config = readFileSync(join(root, ".git", "config"), "utf8");
  writeFileSync(
    join(root, ".git", "config"),
    `${config}[core]\n\tfsmonitor = ${fsmonitor}\n[filter "lfsish"]\n\tclean = ${clean}\n\tsmudge = ${clean}\n\trequired = true\n`,
  );
  writeFileSync(join(root, "notes.txt"), "v2, not committed\n");
  const past = new Date("2001-02-03T04:05:06Z");
  utimesSync(join(root, "app.txt"), past, past);
  return { root, traps, marker: join(traps, "ran") };
}

describe("the fixture is armed", () => {
  test("plain `git status` runs the repository's fsmonitor and clean filter with the caller's environment", async () => {
    const repo = await hostileRepo();
    const r = Bun.spawnSync(["git", "status", "--porcelain"], { cwd: repo.root, env: { ...process.env, OPENAI_API_KEY: SECRET }, stdin: "ignore" });
    expect(r.exitCode).toBe(0);
    const ran = readFileSync(repo.marker, "utf8");
    expect(ran).toContain("fsmonitor");
    expect(ran).toContain("clean");
    expect(readFileSync(join(repo.traps, "env-fsmonitor"), "utf8")).toContain(SECRET);
  });
});

describe("valarmind's git calls", () => {
  test("readGitInfo runs neither the fsmonitor nor the filter, and still reports the status", async () => {
    const repo = await hostileRepo();
    const info = await readGitInfo(repo.root);
    expect(existsSync(repo.marker)).toBe(false);
    expect(info?.branch).toMatch(/^(master|main)$/);
    expect(info?.changes).toContain("M notes.txt");
  });

  test("a real headless turn runs neither, and its request carries the git status", async () => {
    const repo = await hostileRepo();
    server.enqueue(textStream("ok"));
    const r = await chat(["-p", "what changed?"], { cwd: repo.root, server, env: { OPENAI_API_KEY: SECRET } });
    expect(r.code).toBe(0);
    expect(existsSync(repo.marker)).toBe(false);
    const sent = inputItems(server.requests[0]?.body ?? {}).map((item) => (item.type === "message" ? String(item.content) : "")).join("\n");
    expect(sent).toMatch(/git: branch (master|main), 1 changed/);
    expect(sent).toContain("M notes.txt");
  });

  test("git gets an allowlisted environment: no secrets, no GIT_* from the caller, prompts off", async () => {
    const repo = await hostileRepo();
    // A `git` earlier on PATH that records its environment and hands over to the real one.
    const bin = await makeTempDir("valarmind-fake-git-");
    const realGit = Bun.which("git");
    if (!realGit) throw new Error("git is not on PATH");
    writeFileSync(join(bin, "git"), `#!/bin/sh\nenv > "${bin}/env-$$"\nexec "${realGit}" "$@"\n`);
    chmodSync(join(bin, "git"), 0o755);
    const env = { ...process.env, PATH: `${bin}:${process.env.PATH ?? ""}`, OPENAI_API_KEY: SECRET, GIT_DIR: "/nonexistent", GIT_SSH_COMMAND: "touch pwned", LC_ALL: "C" };
    const r = await runGit(repo.root, ["status", "--porcelain"], { env });
    expect(r.exitCode).toBe(0);
    const dumps = [...new Bun.Glob("env-*").scanSync(bin)].map((f) => readFileSync(join(bin, f), "utf8"));
    expect(dumps.length).toBeGreaterThan(0);
    for (const dump of dumps) {
      expect(dump).not.toContain(SECRET);
      expect(dump).not.toContain("GIT_DIR=");
      expect(dump).not.toContain("GIT_SSH_COMMAND=");
      expect(dump).toContain("GIT_TERMINAL_PROMPT=0");
      expect(dump).toContain("LC_ALL=C");
      const names = dump.split("\n").filter((l) => l.includes("=")).map((l) => l.slice(0, l.indexOf("=")));
      for (const name of names) expect(name).toMatch(/^(PATH|HOME|LANG|LC_[A-Z]+|TZ|TMPDIR|USER|LOGNAME|TERM|PWD|SHLVL|_|GIT_(TERMINAL_PROMPT|ASKPASS|PROXY_COMMAND|CONFIG_(COUNT|KEY_\d+|VALUE_\d+)))$/);
    }
    expect(existsSync(join(repo.root, "pwned"))).toBe(false);
  });
});

/**
 * One repository-named executable at a time, with a git command that would run it. The trap
 * notes that it ran; each case first checks that plain git runs it (the case is real), then that
 * `runGit` does not.
 */
describe("every executable a repository can name is neutralised", () => {
  interface Case {
    name: string;
    config: (trapPath: string) => string;
    args: string[];
    setup?: (root: string) => void;
  }
  const cases: Case[] = [
    { name: "core.fsmonitor", config: (t) => `[core]\n\tfsmonitor = ${t}\n`, args: ["status", "--porcelain"] },
    { name: "filter clean (stat-dirty file)", config: (t) => `[filter "lfsish"]\n\tclean = ${t}\n\trequired = true\n`, args: ["status", "--porcelain"] },
    { name: "filter process", config: (t) => `[filter "lfsish"]\n\tprocess = ${t}\n`, args: ["status", "--porcelain"] },
    { name: "filter smudge", config: (t) => `[filter "lfsish"]\n\tsmudge = ${t}\n`, args: ["cat-file", "--filters", "HEAD:app.txt"] },
    { name: "diff.external", config: (t) => `[diff]\n\texternal = ${t}\n`, args: ["diff"], setup: (root) => writeFileSync(join(root, "app.txt"), "changed\n") },
    { name: "diff driver command", config: (t) => `[diff "lfsish"]\n\tcommand = ${t}\n`, args: ["diff"], setup: (root) => writeFileSync(join(root, "app.txt"), "changed\n") },
    { name: "diff textconv", config: (t) => `[diff "lfsish"]\n\ttextconv = ${t}\n`, args: ["log", "-p", "-1"] },
    // git pages only on a terminal, which runGit never has; --no-pager covers the day it does.
    { name: "core.pager / pager.<cmd>", config: (t) => `[core]\n\tpager = ${t}\n[pager]\n\tlog = ${t}\n`, args: ["log", "-1"] },
    { name: "core.hooksPath", config: (t) => `[core]\n\thooksPath = ${t.replace(/\/[^/]+$/, "/hooks")}\n`, args: ["commit", "-q", "--allow-empty", "-m", "x"] },
    { name: "core.editor", config: (t) => `[core]\n\teditor = ${t}\n`, args: ["commit", "-q", "--allow-empty"] },
    { name: "core.sshCommand", config: (t) => `[core]\n\tsshCommand = ${t}\n`, args: ["ls-remote", "ssh://example.invalid/repo"] },
    { name: "core.gitProxy", config: (t) => `[core]\n\tgitProxy = ${t}\n`, args: ["ls-remote", "git://example.invalid/repo"] },
    { name: "remote uploadpack over file://, allowed by the repository", config: (t) => `[protocol "file"]\n\tallow = always\n[remote "origin"]\n\turl = .\n\tuploadpack = ${t}\n`, args: ["ls-remote", "origin"] },
    { name: "ext:: transport, allowed by the repository", config: (t) => `[protocol "ext"]\n\tallow = always\n[remote "origin"]\n\turl = ext::${t}\n`, args: ["ls-remote", "origin"] },
    { name: "gpg.program (log.showSignature)", config: (t) => `[log]\n\tshowSignature = true\n[gpg]\n\tprogram = ${t}\n`, args: ["log", "-1", "signed"] },
  ];

  for (const c of cases) {
    test(c.name, async () => {
      const root = await makeGitWorkspace({ "app.txt": "hello\n", ".gitattributes": "*.txt filter=lfsish diff=lfsish\n" });
      git(root, "add", ".");
      git(root, "commit", "-q", "-m", "initial");
      signedCommit(root);
      const traps = await makeTempDir("valarmind-traps-");
      const t = trapThatFails(traps);
      mkdirSync(join(traps, "hooks"));
      for (const hook of ["pre-commit", "commit-msg", "post-commit"]) {
        writeFileSync(join(traps, "hooks", hook), readFileSync(t));
        chmodSync(join(traps, "hooks", hook), 0o755);
      }
      const configPath = join(root, ".git", "config");
      writeFileSync(configPath, `${readFileSync(configPath, "utf8")}[user]\n\tname = t\n\temail = t@example.invalid\n${c.config(t)}`);
      c.setup?.(root);
      const marker = join(traps, "ran");
      const stale = new Date("2001-02-03T04:05:06Z");

      utimesSync(join(root, "app.txt"), stale, stale);
      runPlain(root, c.args);
      expect(existsSync(marker)).toBe(true);
      rmSync(marker);

      utimesSync(join(root, "app.txt"), new Date("2002-02-03T04:05:06Z"), new Date("2002-02-03T04:05:06Z"));
      await runGit(root, c.args);
      expect(existsSync(marker)).toBe(false);
    });
  }
});

/** A script that notes it ran and fails (so no command waits on it as a filter or pager would). */
function trapThatFails(dir: string): string {
  const path = join(dir, "trap");
  writeFileSync(path, `#!/bin/sh\necho "trap $*" >> "${dir}/ran"\nexit 1\n`);
  chmodSync(path, 0o755);
  return path;
}

/** A branch `signed` whose commit carries a (bogus) signature: log.showSignature hands it to gpg. */
function signedCommit(root: string): void {
  const tree = Bun.spawnSync(["git", "rev-parse", "HEAD^{tree}"], { cwd: root }).stdout.toString().trim();
  const body = `tree ${tree}\nauthor t <t@example.invalid> 1 +0000\ncommitter t <t@example.invalid> 1 +0000\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n abc\n -----END PGP SIGNATURE-----\n\nsigned\n`;
  const made = Bun.spawnSync(["git", "hash-object", "-t", "commit", "-w", "--stdin"], { cwd: root, stdin: new TextEncoder().encode(body) });
  git(root, "update-ref", "refs/heads/signed", made.stdout.toString().trim());
}

/** Plain git as a user would run it (with a terminal for the pager case, via `script`). */
function runPlain(root: string, args: string[]): void {
  // The repository's editor must be the one git picks: the caller's editor variables would win.
  const env = Object.fromEntries(Object.entries({ ...process.env, GIT_TERMINAL_PROMPT: "0" }).filter(([name]) => !["GIT_EDITOR", "EDITOR", "VISUAL"].includes(name)));
  const quoted = ["git", "-c", "user.email=t@example.invalid", "-c", "user.name=t", ...args].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(" ");
  Bun.spawnSync(["script", "-qec", quoted, "/dev/null"], { cwd: root, env, stdin: "ignore", stdout: "ignore", stderr: "ignore", timeout: 20_000 });
}
