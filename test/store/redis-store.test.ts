/**
 * The Redis state store against a real redis-server (started here on a free loopback port; the
 * suite is skipped, saying so, when redis-server is not installed — .ci/run installs it).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFile, writeFile, mkdir } from "node:fs/promises";
import { join, resolve } from "node:path";
import { workspacePaths, type WorkspacePaths } from "../../src/config/paths.ts";
import { UsageError, ValarmindError } from "../../src/errors.ts";
import * as ops from "../../src/state/ops.ts";
import { RedisStateStore, stateKeys } from "../../src/store/redis-state-store.ts";
import { normalizeRemoteUrl } from "../../src/store/project-identity.ts";
import { StoreUnreachableError } from "../../src/store/redis-connection.ts";
import { cleanupTempDirs, makeTempDir, runCli, readUntil } from "../support/cli.ts";
import { REDIS_BINARY, redisCommand, startRedis, type RedisServer } from "./redis-server.ts";

afterAll(cleanupTempDirs);

const at = new Date("2026-03-01T08:00:00.000Z");

async function git(cwd: string, args: string[]): Promise<void> {
  const proc = Bun.spawn(["git", ...args], { cwd, stdout: "ignore", stderr: "pipe", env: { ...process.env, GIT_TERMINAL_PROMPT: "0" } });
  if ((await proc.exited) !== 0) throw new Error(`git ${args.join(" ")} failed: ${await new Response(proc.stderr).text()}`);
}

/** A bare origin and two clones of it: two workspaces of one project. */
async function twoClones(): Promise<{ a: WorkspacePaths; b: WorkspacePaths; origin: string }> {
  const dir = await makeTempDir("valarmind-redis-");
  const origin = join(dir, "origin.git");
  await git(dir, ["init", "--bare", "-q", origin]);
  await git(dir, ["clone", "-q", origin, "a"]);
  await git(dir, ["clone", "-q", origin, "b"]);
  return { a: workspacePaths(join(dir, "a")), b: workspacePaths(join(dir, "b")), origin };
}

describe("normalizeRemoteUrl", () => {
  test("https, ssh and scp forms of one repository agree; credentials, ports and .git go", () => {
    const forms = ["https://user:token@GitHub.com/org/repo.git", "git@github.com:org/repo.git", "ssh://git@github.com:22/org/repo.git/", "https://github.com/org/repo/"];
    expect(new Set(forms.map((u) => normalizeRemoteUrl(u, "/w"))).size).toBe(1);
    expect(normalizeRemoteUrl(forms[0] ?? "", "/w")).toBe("github.com/org/repo");
    expect(normalizeRemoteUrl("../origin.git", "/w/clone")).toBe("file:/w/origin");
    expect(normalizeRemoteUrl("file:///w/origin.git", "/x")).toBe("file:/w/origin");
  });
});

describe.skipIf(!REDIS_BINARY)("RedisStateStore on a real redis-server", () => {
  let server: RedisServer;
  let scratch: string;
  beforeAll(async () => {
    scratch = await makeTempDir("valarmind-redis-server-");
    server = await startRedis(scratch);
  });
  afterAll(async () => {
    await server?.stop();
  });

  test("two clones of one repository share one state, namespaced by the origin URL", async () => {
    const { a, b, origin } = await twoClones();
    const storeA = new RedisStateStore(a, server.url, { clock: () => at });
    await storeA.update((s) => ops.setGoal(s, "ship the shared store"));
    const read = await new RedisStateStore(b, server.url).read();
    expect(read.state.goal).toBe("ship the shared store");
    expect((await storeA.keys()).state).toBe(stateKeys(`git:file:${resolve(origin).replace(/\.git$/, "")}`).state);
    // Each clone keeps the state it saw as its local copy.
    expect(JSON.parse(await readFile(b.stateJson, "utf8")).goal).toBe("ship the shared store");
  });

  test("a projectId setting names the project instead of the origin", async () => {
    const { a } = await twoClones();
    const store = new RedisStateStore(a, server.url, { projectId: "team-x" });
    await store.update((s) => ops.setNow(s, "on team-x"));
    expect(await redisCommand(server.url, "EXISTS", ["valarmind:{id:team-x}:state"])).toBe(1);
  });

  test("no origin and no projectId is a usage error naming both fixes", async () => {
    const dir = await makeTempDir();
    await git(dir, ["init", "-q"]);
    const error = await new RedisStateStore(workspacePaths(dir), server.url).read().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UsageError);
    expect(String((error as Error).message)).toContain("no git remote 'origin' and no projectId");
    expect((error as UsageError).hint).toContain("git remote add origin");
  });

  test("40 concurrent writers from two clones all land", async () => {
    const { a, b } = await twoClones();
    const writes = Array.from({ length: 40 }, (_, i) => new RedisStateStore(i % 2 === 0 ? a : b, server.url).update((s) => ops.addTask(s, `task ${i}`, {}, at)));
    const results = await Promise.all(writes);
    expect(results.every((r) => r.written)).toBe(true);
    const titles = (await new RedisStateStore(a, server.url).read()).state.tasks_open.map((t) => t.title).sort();
    expect(titles).toEqual(Array.from({ length: 40 }, (_, i) => `task ${i}`).sort());
    expect(new Set((await new RedisStateStore(b, server.url).read()).state.tasks_open.map((t) => t.id)).size).toBe(40);
  });

  test("a lock holder killed with SIGKILL: its lock expires and the next writer proceeds, nothing lost", async () => {
    const { a, b } = await twoClones();
    await new RedisStateStore(a, server.url).update((s) => ops.addTask(s, "before the crash", {}, at));
    const keys = await new RedisStateStore(a, server.url).keys();
    const script = `
      const { RedisClient } = await import("bun");
      const { acquireRedisLock } = await import(${JSON.stringify(resolve("src/store/redis-lock.ts"))});
      const client = new RedisClient(${JSON.stringify(server.url)});
      await acquireRedisLock(client, ${JSON.stringify(keys.lock)}, "test", { ttlMs: 1500 });
      console.log("locked");
      setInterval(() => {}, 60_000);`;
    const holder = Bun.spawn([process.execPath, "-e", script], { stdout: "pipe", stderr: "inherit" });
    await readUntil(holder.stdout, (text) => text.includes("locked"));
    holder.kill("SIGKILL");
    await holder.exited;
    expect(await redisCommand(server.url, "EXISTS", [keys.lock])).toBe(1);
    const result = await new RedisStateStore(b, server.url).update((s) => ops.addTask(s, "after the crash", {}, at));
    expect(result.written).toBe(true);
    const titles = (await new RedisStateStore(a, server.url).read()).state.tasks_open.map((t) => t.title);
    expect(titles).toEqual(["before the crash", "after the crash"]);
  });

  test("a writer whose lock expired mid-change cannot overwrite the newer state (compare-and-set)", async () => {
    const { a, b } = await twoClones();
    await new RedisStateStore(a, server.url).update((s) => ops.addTask(s, "first", {}, at));
    const other = `
      const { workspacePaths } = await import(${JSON.stringify(resolve("src/config/paths.ts"))});
      const ops = await import(${JSON.stringify(resolve("src/state/ops.ts"))});
      const { RedisStateStore } = await import(${JSON.stringify(resolve("src/store/redis-state-store.ts"))});
      await new RedisStateStore(workspacePaths(${JSON.stringify(b.root)}), ${JSON.stringify(server.url)}).update((s) => ops.addTask(s, "newer", {}));`;
    const slow = new RedisStateStore(a, server.url, { lock: { ttlMs: 100 } });
    const error = await slow
      .update((s) => {
        // Stalls past the lock's lifetime while another process takes the lock and writes.
        const done = Bun.spawnSync([process.execPath, "-e", other], { stderr: "pipe" });
        if (done.exitCode !== 0) throw new Error(done.stderr.toString());
        return ops.addTask(s, "stale", {}, at);
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValarmindError);
    expect(String((error as Error).message)).toContain("nothing was written");
    const titles = (await new RedisStateStore(a, server.url).read()).state.tasks_open.map((t) => t.title);
    expect(titles).toEqual(["first", "newer"]);
  });

  test("waiting for a lock that is never released ends in a clear timeout error; nothing changes", async () => {
    const { a } = await twoClones();
    const store = new RedisStateStore(a, server.url, { lock: { waitMs: 300 } });
    await store.update((s) => ops.setGoal(s, "kept"));
    const keys = await store.keys();
    await redisCommand(server.url, "SET", [keys.lock, "someone-else", "PX", "60000"]);
    const error = await store.update((s) => ops.setGoal(s, "lost")).catch((e: unknown) => e);
    expect(String((error as Error).message)).toMatch(/^timed out after 0 s waiting for the state lock .*; nothing was changed$/);
    expect(await redisCommand(server.url, "GET", [keys.lock])).toBe("someone-else");
    await redisCommand(server.url, "DEL", [keys.lock]);
    expect((await store.read()).state.goal).toBe("kept");
  });

  test("a corrupt value is reported by reads, then kept as …:corrupt:<time> by the next change", async () => {
    const { a } = await twoClones();
    const store = new RedisStateStore(a, server.url, { clock: () => at });
    const keys = await store.keys();
    const bad = JSON.stringify({ schema_version: 1, goal: 42 });
    await redisCommand(server.url, "SET", [keys.state, bad]);
    const read = await store.read();
    expect(read.source).toBe("invalid");
    expect(read.problem).toContain(keys.state);
    expect(await redisCommand(server.url, "GET", [keys.state])).toBe(bad);
    const result = await store.update((s) => ops.setGoal(s, "fresh"));
    const corruptKey = `${keys.prefix}:corrupt:2026-03-01T08-00-00-000Z`;
    expect(result.notices.join("\n")).toContain(`It was kept as ${corruptKey}`);
    expect(await redisCommand(server.url, "GET", [corruptKey])).toBe(bad);
    expect((await store.read()).state.goal).toBe("fresh");
    // A second corruption at the same instant gets its own key: nothing is overwritten.
    await redisCommand(server.url, "SET", [keys.state, "{not json"]);
    const recovered = await store.recover();
    expect(recovered.source).toBe("recovered");
    expect(await redisCommand(server.url, "GET", [`${corruptKey}-2`])).toBe("{not json");
  });
});

describe.skipIf(!REDIS_BINARY)("RedisStateStore when the server restarts or stops", () => {
  test("restarted mid-run with the append-only file: nothing is lost and writes continue", async () => {
    const dir = await makeTempDir("valarmind-redis-aof-");
    const { a, b } = await twoClones();
    let server = await startRedis(dir, { aofDir: dir });
    const port = server.port;
    try {
      await Promise.all(Array.from({ length: 10 }, (_, i) => new RedisStateStore(i % 2 ? a : b, server.url).update((s) => ops.addTask(s, `before ${i}`, {}, at))));
      await server.stop("SIGTERM");
      server = await startRedis(dir, { port, aofDir: dir });
      await Promise.all(Array.from({ length: 10 }, (_, i) => new RedisStateStore(i % 2 ? a : b, server.url).update((s) => ops.addTask(s, `after ${i}`, {}, at))));
      const titles = (await new RedisStateStore(a, server.url).read()).state.tasks_open.map((t) => t.title);
      expect(titles.length).toBe(20);
      expect(titles.filter((t) => t.startsWith("before")).length).toBe(10);
    } finally {
      await server.stop();
    }
  });

  test("stopped: reads fall back to the local copy marked stale, writes fail with exit 1 and change nothing locally", async () => {
    const dir = await makeTempDir("valarmind-redis-stop-");
    const { a } = await twoClones();
    const server = await startRedis(dir);
    await new RedisStateStore(a, server.url).update((s) => ops.setGoal(s, "survives the outage"));
    await server.stop();
    const before = await readFile(a.stateJson, "utf8");
    const url = `redis://someone:hunter2@127.0.0.1:${server.port}/0`;
    const store = new RedisStateStore(a, url);
    const read = await store.read();
    expect(read.stale).toBe(true);
    expect(read.state.goal).toBe("survives the outage");
    expect(read.notices[0]).toContain(`the state store redis://127.0.0.1:${server.port}/0 is unreachable`);
    expect(read.notices.join("\n")).not.toContain("hunter2");
    const error = await store.update((s) => ops.setGoal(s, "lost")).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreUnreachableError);
    expect((error as ValarmindError).exitCode).toBe(1);
    expect((error as Error).message).not.toContain("hunter2");
    expect(await readFile(a.stateJson, "utf8")).toBe(before);
    // Through the CLI: the same, with exit 1 for the change.
    const env = { VALARMIND_STORE: url };
    const shown = await runCli(["state", "show", "--json"], { cwd: a.root, env });
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.stdout).goal).toBe("survives the outage");
    expect(shown.stderr).toContain("may be stale");
    const changed = await runCli(["state", "goal", "lost"], { cwd: a.root, env });
    expect(changed.code).toBe(1);
    expect(changed.stderr).toContain(`cannot reach the state store redis://127.0.0.1:${server.port}/0`);
    expect(changed.stderr).not.toContain("hunter2");
    expect(await readFile(a.stateJson, "utf8")).toBe(before);
  });
});

describe("choosing the store", () => {
  test("a project's .valarmind/config.json cannot choose a redis store, even in a trusted folder", async () => {
    const { resolveStoreChoice } = await import("../../src/store/create-state-store.ts");
    const { resolveSettings } = await import("../../src/config/load-settings.ts");
    const root = await makeTempDir();
    await mkdir(join(root, ".valarmind"), { recursive: true });
    await writeFile(join(root, ".valarmind", "config.json"), JSON.stringify({ store: "redis://attacker.example:6379", projectId: "p" }));
    const previous = process.env.XDG_CONFIG_HOME;
    process.env.XDG_CONFIG_HOME = await makeTempDir();
    try {
      expect(resolveStoreChoice(root, {})).toEqual({ kind: "file" });
      const loaded = resolveSettings(root, {}, { trusted: true });
      expect(loaded.settings.store).toBe("file");
      // Not silently: the report names it, and chat tells the user (src/cli/actions/chat.ts).
      expect(loaded.project?.userOnly).toEqual(["store"]);
      expect(resolveStoreChoice(root, { VALARMIND_STORE: "redis://127.0.0.1:1" })).toEqual({ kind: "redis", url: "redis://127.0.0.1:1" });
      expect(() => resolveStoreChoice(root, { VALARMIND_STORE: "http://x" })).toThrow(UsageError);
    } finally {
      if (previous === undefined) delete process.env.XDG_CONFIG_HOME;
      else process.env.XDG_CONFIG_HOME = previous;
    }
  });
});


describe.skipIf(!REDIS_BINARY)("valarmind store push / pull", () => {
  test("push copies the file to the server, refuses a different target without --force, pull copies back", async () => {
    const dir = await makeTempDir("valarmind-redis-push-");
    const server = await startRedis(dir);
    try {
      const { a, b } = await twoClones();
      const file = { cwd: a.root, env: { VALARMIND_STORE: "file" } };
      expect((await runCli(["state", "goal", "from the file"], file)).code).toBe(0);
      const pushed = await runCli(["store", "push", "--url", server.url], file);
      expect(pushed.code).toBe(0);
      expect(pushed.stdout).toContain("copied the working state");
      const onServer = { cwd: b.root, env: { VALARMIND_STORE: server.url } };
      const shown = await runCli(["state", "show", "--json"], onServer);
      expect(JSON.parse(shown.stdout).goal).toBe("from the file");
      // The server moves on; pushing the older file is refused and says what would change.
      expect((await runCli(["state", "task", "add", "server-side task"], onServer)).code).toBe(0);
      const refused = await runCli(["store", "push", "--url", server.url], file);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain("is newer than");
      expect(refused.stderr).toContain("tasks_open: -T-1");
      expect(JSON.parse((await runCli(["state", "show", "--json"], onServer)).stdout).tasks_open).toHaveLength(1);
      // pull into the file store: refused without --force, done with it.
      const pullRefused = await runCli(["store", "pull", "--url", server.url], file);
      expect(pullRefused.code).toBe(1);
      expect(pullRefused.stderr).toContain("tasks_open: +T-1");
      const pulled = await runCli(["store", "pull", "--url", server.url, "--force"], file);
      expect(pulled.code).toBe(0);
      expect(JSON.parse(await readFile(a.stateJson, "utf8")).tasks_open[0].title).toBe("server-side task");
      const again = await runCli(["store", "pull", "--url", server.url], file);
      expect(again.stdout).toContain("already holds the same state");
    } finally {
      await server.stop();
    }
  });

  test("state, compact and the prompt builder read the shared state the same way", async () => {
    const dir = await makeTempDir("valarmind-redis-same-");
    const server = await startRedis(dir);
    try {
      const { a, b } = await twoClones();
      const env = { VALARMIND_STORE: server.url };
      expect((await runCli(["init"], { cwd: a.root, env })).code).toBe(0);
      expect((await runCli(["state", "goal", "one goal for both clones"], { cwd: a.root, env })).code).toBe(0);
      expect((await runCli(["init"], { cwd: b.root, env })).code).toBe(0);
      const compact = await runCli(["compact"], { cwd: b.root, env });
      expect(compact.code).toBe(0);
      expect(await readFile(b.stateToon, "utf8")).toContain("one goal for both clones");
      const prompt = await runCli(["prompt", "--dry-run", "--show-prompt", "hello"], { cwd: b.root, env });
      expect(prompt.code).toBe(0);
      expect(prompt.stdout).toContain("one goal for both clones");
    } finally {
      await server.stop();
    }
  });
});
