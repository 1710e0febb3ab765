/**
 * `valarmind sessions prune` on sessions written by real headless turns (src/session/session-prune.ts):
 * without --yes it only lists; with --yes it removes a session's transcript, manifests, shell
 * outputs and checkpoints, keeps recent sessions, a session in use and a fork's parent, and never
 * follows a symlink out of `.valarmind/`.
 */
import { afterAll, afterEach, beforeEach, describe, expect, test } from "bun:test";
import { appendFileSync, existsSync, lstatSync, mkdirSync, readdirSync, symlinkSync, utimesSync, lutimesSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { cleanupTempDirs, makeTempDir } from "../support/cli.ts";
import { startFakeResponsesServer, textStream, toolCallStream, type FakeResponsesServer } from "../support/fake-responses-server.ts";
import { makeGitWorkspace } from "../agent/support/agent-harness.ts";
import { chat, jsonEvents, sessions } from "../agent/support/cli-chat.ts";
import { workspacePaths } from "../../src/config/paths.ts";
import { lockSession, releaseSessionLock } from "../../src/session/session-lock.ts";

let server: FakeResponsesServer;
let root: string;
beforeEach(async () => {
  server = startFakeResponsesServer();
  root = await makeGitWorkspace({ "src/a.ts": "export const a = 1;\n" });
});
afterEach(async () => {
  await server.close();
});
afterAll(cleanupTempDirs);

const DAY = 24 * 60 * 60;

/** One headless turn in a new session that edits src/a.ts (so it has a checkpoint); its id and transcript. */
async function newSession(message: string): Promise<{ id: string; file: string }> {
  server.enqueue(toolCallStream([{ name: "edit_file", arguments: { path: "src/a.ts", old_string: "a = ", new_string: "a = 1 + " } }]), textStream(`done: ${message}`));
  const r = await chat(["-p", message, "--json", "--yes"], { cwd: root, server });
  expect(r.code).toBe(0);
  const start = jsonEvents(r.stdout)[0];
  return { id: String(start?.sessionId), file: String(start?.transcriptPath) };
}

/** Every file and directory of `path` (not following links) dated `days` ago. */
function age(path: string, days: number): void {
  const when = Date.now() / 1000 - days * DAY;
  const stats = lstatSync(path);
  if (stats.isSymbolicLink()) return lutimesSync(path, when, when);
  if (stats.isDirectory()) for (const name of readdirSync(path)) age(join(path, name), days);
  utimesSync(path, when, when);
}

function sessionFiles(id: string, file: string): string[] {
  const dir = join(root, ".valarmind");
  return [file, join(dir, "sessions", id), join(dir, "checkpoints", id)];
}

describe("sessions prune", () => {
  test("lists old sessions without --yes and removes nothing; --yes removes their transcript, manifests and checkpoints and keeps the rest", async () => {
    const old = await newSession("an old session");
    const recent = await newSession("a recent session");
    for (const path of sessionFiles(old.id, old.file)) {
      expect(existsSync(path)).toBe(true);
      age(path, 45);
    }
    // Files a session left after its transcript was deleted by hand: removed by the same rule.
    const orphan = join(root, ".valarmind", "checkpoints", "dead0001");
    mkdirSync(join(orphan, "blobs"), { recursive: true });
    writeFileSync(join(orphan, "blobs", "x"), "copy");
    age(orphan, 90);

    const listed = await sessions(["prune"], root);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain("2 session(s) unused for over 30 days");
    expect(listed.stdout).toMatch(new RegExp(`${old.id}\\s+last used \\d{4}-\\d{2}-\\d{2}\\s+1 turns\\s+[\\d.]+ (KB|B)\\s+an old session`));
    expect(listed.stdout).toContain("dead0001");
    expect(listed.stdout).toContain("(files left without a transcript)");
    expect(listed.stdout).not.toContain(recent.id);
    expect(listed.stdout).toContain("kept 1 used within 30 days. Nothing was removed: run 'valarmind sessions prune --older-than 30 --yes'");
    for (const path of sessionFiles(old.id, old.file)) expect(existsSync(path)).toBe(true);

    const removed = await sessions(["prune", "--yes"], root);
    expect(removed.stderr).toBe("");
    expect(removed.code).toBe(0);
    expect(removed.stdout).toMatch(new RegExp(`^removed ${old.id} `, "m"));
    expect(removed.stdout).toContain("removed 2 session(s)");
    for (const path of sessionFiles(old.id, old.file)) expect(existsSync(path)).toBe(false);
    expect(existsSync(orphan)).toBe(false);
    for (const path of sessionFiles(recent.id, recent.file)) expect(existsSync(path)).toBe(true);
    const left = await sessions(["list"], root);
    expect(left.stdout).toContain(recent.id);
    expect(left.stdout).not.toContain(old.id);

    // --older-than 0 takes the recent one too.
    expect((await sessions(["prune", "--older-than", "0", "--yes"], root)).stdout).toContain(`removed ${recent.id} `);
    expect(existsSync(recent.file)).toBe(false);
  });

  test("a session in use is kept (exit 1, named), and so is the old session a kept fork came from", async () => {
    const busy = await newSession("a session someone is in");
    const parent = await newSession("the parent");
    const fork = await newSession("the fork");
    appendFileSync(fork.file, `${JSON.stringify({ v: 1, kind: "note", ts: new Date().toISOString(), what: "forked_from", text: `${parent.id}: the session was in use` })}\n`);
    for (const s of [busy, parent]) for (const path of sessionFiles(s.id, s.file)) age(path, 60);

    const held = await lockSession(workspacePaths(root), busy.id, { waitMs: 0 });
    expect(held.kind).toBe("held");
    try {
      // The preview already says the session in use stays, and does not offer it for removal.
      const preview = await sessions(["prune"], root);
      expect(preview.code).toBe(0);
      expect(preview.stdout).toContain(`${busy.id.padEnd(10)} in use by another valarmind (pid ${process.pid}`);
      expect(preview.stdout).toContain("1 in use now");
      expect(preview.stdout).not.toMatch(new RegExp(`^  ${busy.id} +last used`, "m"));
      expect(preview.stdout).toContain("Nothing was removed.");
      expect(existsSync(busy.file)).toBe(true);
      const r = await sessions(["prune", "--yes"], root);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`valarmind: kept session ${busy.id}: in use by another valarmind (pid ${process.pid}`);
      expect(r.stdout).toContain("removed 0 session(s)");
      expect(r.stdout).toContain(`1 that newer sessions were forked from (${parent.id})`);
      for (const s of [busy, parent, fork]) expect(existsSync(s.file)).toBe(true);
    } finally {
      if (held.kind === "held") await releaseSessionLock(held.lock);
    }
  });

  test("the list without --yes judges locks without writing: one left by a dead process, or old and ownerless, does not keep a session", async () => {
    const dead = await newSession("left locked by a killed process");
    const ownerless = await newSession("left locked before owners were recorded");
    for (const s of [dead, ownerless]) for (const path of sessionFiles(s.id, s.file)) age(path, 60);
    const sessionsDir = join(root, ".valarmind", "sessions");
    mkdirSync(join(sessionsDir, `${dead.id}.lock`));
    writeFileSync(join(sessionsDir, `${dead.id}.lock`, "owner.json"), JSON.stringify({ pid: 2 ** 22 + 12345, hostname: hostname() }));
    mkdirSync(join(sessionsDir, `${ownerless.id}.lock`));
    const old = new Date(Date.now() - 60_000);
    utimesSync(join(sessionsDir, `${ownerless.id}.lock`), old, old);
    const before = readdirSync(sessionsDir).sort();
    const preview = await sessions(["prune"], root);
    expect(preview.code).toBe(0);
    expect(preview.stdout).toContain("2 session(s) unused for over 30 days");
    expect(preview.stdout).not.toContain("in use");
    expect(readdirSync(sessionsDir).sort()).toEqual(before);
  });

  test("a symlink in place of a session's directory is removed as a link; what it points to is untouched", async () => {
    const outside = await makeTempDir();
    writeFileSync(join(outside, "precious.txt"), "keep me");
    const checkpoints = join(root, ".valarmind", "checkpoints");
    mkdirSync(checkpoints, { recursive: true });
    const link = join(checkpoints, "evil1234");
    symlinkSync(outside, link);
    age(link, 90);

    const r = await sessions(["prune", "--yes"], root);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("removed evil1234 ");
    expect(existsSync(link)).toBe(false);
    expect(existsSync(join(outside, "precious.txt"))).toBe(true);
  });

  test("--older-than must be a whole number of days: exit 2 naming the flag, nothing removed", async () => {
    const s = await newSession("kept");
    for (const bad of ["x", "-1", "1.5", ""]) {
      const r = await sessions(["prune", "--older-than", bad, "--yes"], root);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain("--older-than");
      expect(r.stderr).toContain("whole number of days");
    }
    expect(existsSync(s.file)).toBe(true);
  });

  test("sessions list points to prune when old sessions take space", async () => {
    const s = await newSession("old one");
    expect((await sessions(["list"], root)).stdout).not.toContain("sessions prune");
    for (const path of sessionFiles(s.id, s.file)) age(path, 31);
    const r = await sessions(["list"], root);
    expect(r.stdout).toMatch(/\n1 session\(s\) unused for over 30 days take [\d.]+ (KB|B|MB); 'valarmind sessions prune' lists them, '--yes' removes them\n$/);
  });
});
