/**
 * Audit of the shared (Redis/Valkey) state store from a user's side, against a real redis-server on
 * loopback (test/store/redis-server.ts; skipped without redis-server). Written as a fault-finding
 * pass; a comment marked "Was" says what a fixed defect did.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { connect, createServer, type Socket } from "node:net";
import { basename, join } from "node:path";
import { workspacePaths, type WorkspacePaths } from "../../src/config/paths.ts";
import { UsageError, ValarmindError } from "../../src/errors.ts";
import * as ops from "../../src/state/ops.ts";
import { FileStateStore } from "../../src/state/store.ts";
import { resolveStoreChoice } from "../../src/store/create-state-store.ts";
import { displayRedisUrl, StoreUnreachableError } from "../../src/store/redis-connection.ts";
import { RedisStateStore } from "../../src/store/redis-state-store.ts";
import { runStorePush } from "../../src/store/store-transfer.ts";
import { cleanupTempDirs, makeTempDir, runCli } from "../support/cli.ts";
import { chat } from "../agent/support/cli-chat.ts";
import { startFakeResponsesServer, textStream } from "../support/fake-responses-server.ts";
import { REDIS_BINARY, redisCommand, startRedis, type RedisServer } from "./redis-server.ts";

const at = new Date("2026-03-01T08:00:00.000Z");
const PW = "hunter2pw-audit";
const saved = { xdg: process.env.XDG_CONFIG_HOME, store: process.env.VALARMIND_STORE };

async function git(cwd: string, args: string[]): Promise<void> {
  const proc = Bun.spawn(["git", ...args], { cwd, stdout: "ignore", stderr: "pipe", env: { ...process.env, GIT_TERMINAL_PROMPT: "0" } });
  if ((await proc.exited) !== 0) throw new Error(`git ${args.join(" ")} failed: ${await new Response(proc.stderr).text()}`);
}

/** A git workspace with its own origin, so the store (and the CLI) find one namespace for it. */
async function workspace(): Promise<WorkspacePaths> {
  const dir = await makeTempDir("valarmind-audit-ws-");
  await git(dir, ["init", "-q"]);
  await git(dir, ["remote", "add", "origin", `https://example.com/org/${basename(dir)}.git`]);
  return workspacePaths(dir);
}

const caught = (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => e);

/** Every file under the memory dir, and the server's value, that holds `text` (where a state went). */
async function whereIs(text: string, paths: WorkspacePaths, url: string, key: string): Promise<string[]> {
  const found: string[] = [];
  for (const name of await readdir(paths.memoryDir).catch(() => [] as string[])) {
    const body = await readFile(join(paths.memoryDir, name), "utf8").catch(() => "");
    if (body.includes(text)) found.push(name);
  }
  if (String((await redisCommand(url, "GET", [key])) ?? "").includes(text)) found.push("server");
  return found;
}

/** A TCP relay that holds the first request containing `marker` until `before()` has run. */
async function holdingRelay(port: number, marker: string, before: () => Promise<void>) {
  let fired = false;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(port, "127.0.0.1");
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("error", () => {});
      s.on("close", () => sockets.delete(s));
    }
    let seen = "";
    let queue = Promise.resolve();
    client.on("data", (chunk: Buffer) => {
      queue = queue.then(async () => {
        seen += chunk.toString("latin1");
        if (!fired && seen.includes(marker)) {
          fired = true;
          await before();
        }
        upstream.write(chunk);
      });
    });
    upstream.on("data", (chunk: Buffer) => client.write(chunk));
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const address = server.address();
  if (typeof address !== "object" || !address) throw new Error("relay: no address");
  return {
    port: address.port,
    fired: () => fired,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe.skipIf(!REDIS_BINARY)("shared store faults (audit)", () => {
  let server: RedisServer;
  let url: string; // with the password
  let shown: string; // what messages may show
  beforeAll(async () => {
    process.env.XDG_CONFIG_HOME = await makeTempDir("valarmind-audit-cfg-");
    delete process.env.VALARMIND_STORE;
    server = await startRedis(await makeTempDir("valarmind-audit-redis-"));
    await redisCommand(server.url, "CONFIG", ["SET", "requirepass", PW]);
    url = `redis://:${PW}@127.0.0.1:${server.port}`;
    shown = displayRedisUrl(url);
    // A user who may read but not write (an ACL a team might hand out to CI).
    await redisCommand(url, "ACL", ["SETUSER", "reader", "on", ">readerpw-audit", "~*", "+@read", "+@scripting", "+@connection"]);
  });
  afterAll(async () => {
    await server?.stop();
    if (saved.xdg === undefined) delete process.env.XDG_CONFIG_HOME;
    else process.env.XDG_CONFIG_HOME = saved.xdg;
    if (saved.store !== undefined) process.env.VALARMIND_STORE = saved.store;
    await cleanupTempDirs();
  });

  test("a value from a newer schema is refused by read, recover and update (exit 2), and left as it is", async () => {
    const paths = await workspace();
    const store = new RedisStateStore(paths, url, { clock: () => at });
    await store.update((s) => ops.setGoal(s, "mine"));
    const keys = await store.keys();
    const local = await readFile(paths.stateJson, "utf8");
    const newer = JSON.stringify({ schema_version: 99, goal: "from the future" });
    await redisCommand(url, "SET", [keys.state, newer]);
    for (const run of [() => store.read(), () => store.recover(), () => store.update((s) => ops.setGoal(s, "x"))]) {
      const error = await caught(run());
      expect(error).toBeInstanceOf(UsageError);
      expect((error as Error).message).toContain(`${keys.state} was written by a newer valarmind (schema_version 99`);
      expect((error as Error).message).not.toContain(PW);
    }
    const cli = await runCli(["state", "goal", "x"], { cwd: paths.root, env: { VALARMIND_STORE: url } });
    expect(cli.code).toBe(2);
    expect(cli.stderr).not.toContain(PW);
    expect(await redisCommand(url, "GET", [keys.state])).toBe(newer);
    expect(await redisCommand(url, "GET", [keys.version])).toBe("1");
    expect(await redisCommand(url, "KEYS", [`${keys.prefix}:corrupt:*`])).toEqual([]);
    expect(await readFile(paths.stateJson, "utf8")).toBe(local);
  });

  test("an 8 MiB junk value and a hash in place of the state: short report, kept aside whole, never deleted", async () => {
    const paths = await workspace();
    const store = new RedisStateStore(paths, url, { clock: () => at });
    const keys = await store.keys();
    const junk = `{"goal": "${"x".repeat(8 * 1024 * 1024)}`;
    await redisCommand(url, "SET", [keys.state, junk]);
    const read = await store.read();
    expect(read.source).toBe("invalid");
    expect(read.notices.join("\n").length).toBeLessThan(2_000); // the value is not dumped
    expect(read.notices.join("\n")).not.toContain(PW);
    expect(await redisCommand(url, "STRLEN", [keys.state])).toBe(junk.length);
    const changed = await store.update((s) => ops.setGoal(s, "fresh"));
    const aside = `${keys.prefix}:corrupt:2026-03-01T08-00-00-000Z`;
    expect(changed.notices.join("\n")).toContain(`It was kept as ${aside}`);
    expect(await redisCommand(url, "STRLEN", [aside])).toBe(junk.length);
    await redisCommand(url, "DEL", [keys.state]);
    await redisCommand(url, "HSET", [keys.state, "goal", "not a string"]);
    expect((await store.read()).notices[0]).toContain("a Redis hash, not the state's JSON text");
    expect((await store.recover()).source).toBe("recovered");
    expect(await redisCommand(url, "TYPE", [`${aside}-2`])).toBe("hash");
  });

  test("a wrong password fails the change without touching the local copy, never echoing the password", async () => {
    const paths = await workspace();
    await new RedisStateStore(paths, url).update((s) => ops.setGoal(s, "kept"));
    const local = await readFile(paths.stateJson, "utf8");
    const wrong = `redis://:not-the-password-42@127.0.0.1:${server.port}`;
    const error = await caught(new RedisStateStore(paths, wrong).update((s) => ops.setGoal(s, "lost")));
    expect(error).toBeInstanceOf(StoreUnreachableError); // (Bun reports only "Connection closed", not the auth failure)
    expect((error as Error).message).toContain(shown);
    expect((error as Error).message).not.toContain("not-the-password-42");
    const read = await new RedisStateStore(paths, wrong).read();
    expect(read.stale).toBe(true);
    expect(read.state.goal).toBe("kept");
    expect(await readFile(paths.stateJson, "utf8")).toBe(local);
  });

  test("rediss:// to a plain server ends within the connect timeout with the unreachable error", async () => {
    const paths = await workspace();
    const tls = `rediss://:${PW}@127.0.0.1:${server.port}`;
    const started = Date.now();
    const error = await caught(new RedisStateStore(paths, tls).read());
    expect(Date.now() - started).toBeLessThan(6_000);
    expect(error).toBeInstanceOf(StoreUnreachableError);
    expect((error as Error).message).toStartWith(`cannot reach the state store rediss://127.0.0.1:${server.port} (`);
    expect((error as Error).message).not.toContain(PW);
  });

  test("one store object (as a chat session holds) survives a server restart; each change lands exactly once", async () => {
    const dir = await makeTempDir("valarmind-audit-aof-");
    let aof = await startRedis(dir, { aofDir: dir });
    try {
      const paths = await workspace();
      const store = new RedisStateStore(paths, aof.url, { clock: () => at });
      await store.update((s) => ops.addTask(s, "a", {}, at));
      await aof.stop();
      expect(await caught(store.update((s) => ops.addTask(s, "offline", {}, at)))).toBeInstanceOf(StoreUnreachableError);
      aof = await startRedis(dir, { port: aof.port, aofDir: dir });
      await store.update((s) => ops.addTask(s, "b", {}, at));
      const keys = await store.keys();
      expect(await redisCommand(aof.url, "GET", [keys.version])).toBe("2");
      expect((await store.read()).state.tasks_open.map((t) => t.title)).toEqual(["a", "b"]);
    } finally {
      await aof.stop();
    }
  });

  test("an untrusted repository's projectId (and store) cannot redirect the keys", async () => {
    const root = await makeTempDir("valarmind-audit-untrusted-");
    await mkdir(join(root, ".valarmind"), { recursive: true });
    await writeFile(join(root, ".valarmind", "config.json"), JSON.stringify({ store: "redis://attacker.example:6379", projectId: "victim" }));
    expect(resolveStoreChoice(root, {})).toEqual({ kind: "file" });
    expect(resolveStoreChoice(root, { VALARMIND_STORE: url })).toEqual({ kind: "redis", url });
  });

  // Was: a server that refuses a command (ACL NOPERM for a user without write rights; the same
  // for OOM under maxmemory, READONLY on a replica, MISCONF) escapes RedisStateStore.update/readWith
  // as a raw RedisError: the CLI prints "valarmind: unexpected error: NOPERM this user has no
  // permissions to run the 'set' command", exit 1, naming neither the server, the key nor what
  // happened to the state. (src/store/redis-state-store.ts update/readWith catch blocks.)
  test("a user without write rights gets a clear error naming the server, not 'unexpected error'", async () => {
    const paths = await workspace();
    await new RedisStateStore(paths, url).update((s) => ops.setGoal(s, "shared"));
    const reader = `redis://reader:readerpw-audit@127.0.0.1:${server.port}`;
    const cli = await runCli(["state", "goal", "mine"], { cwd: paths.root, env: { VALARMIND_STORE: reader } });
    expect(cli.code).toBe(1);
    expect(cli.stderr).not.toContain("readerpw-audit");
    expect(cli.stderr).not.toContain("unexpected error");
    expect(cli.stderr).toContain(displayRedisUrl(reader));
    const error = await caught(new RedisStateStore(paths, reader).update((s) => ops.setGoal(s, "mine")));
    expect(error).toBeInstanceOf(ValarmindError);
  });

  // Was: switching a workspace from the file store to a shared store whose project key is empty
  // silently destroys the local state: `valarmind init` (ensure) — or any first change — writes an
  // empty state to the server and then overwrites .valarmind/memory/state.json with it as "the local
  // copy" (cacheLocally). init even prints "created .valarmind/memory/state.json (empty working
  // state)". Switching back to VALARMIND_STORE=file shows an empty state: goal and tasks are gone.
  // (src/store/redis-state-store.ts update → cacheLocally; readWith "missing" gives no notice.)
  test("switching from file to the shared store keeps the local state (it is not overwritten by an empty one)", async () => {
    const paths = await workspace();
    const file = { cwd: paths.root, env: { VALARMIND_STORE: "file" } };
    expect((await runCli(["state", "goal", "local work"], file)).code).toBe(0);
    expect((await runCli(["state", "task", "add", "local task"], file)).code).toBe(0);
    const init = await runCli(["init"], { cwd: paths.root, env: { VALARMIND_STORE: url } });
    expect(init.code).toBe(0);
    const keys = await new RedisStateStore(paths, url).keys();
    expect(await whereIs("local work", paths, url, keys.state)).not.toEqual([]);
  });

  // Was: the server loses its data (restarted without persistence, FLUSHDB, allkeys-lru eviction):
  // read() answers "missing" with no notice, so state show/chat work from an empty state although
  // the local copy holds the last state, and the next change overwrites that copy with the new,
  // nearly empty state. (Same place: readWith "missing" branch and update → cacheLocally.)
  test("after the server lost its data, the user is told and the last local copy is not overwritten", async () => {
    const dir = await makeTempDir("valarmind-audit-volatile-");
    let volatile = await startRedis(dir);
    try {
      const paths = await workspace();
      const store = new RedisStateStore(paths, volatile.url, { clock: () => at });
      await store.update((s) => ops.setGoal(s, "before the restart"));
      await store.update((s) => ops.addTask(s, "a task worth keeping", {}, at));
      await volatile.stop();
      volatile = await startRedis(dir, { port: volatile.port }); // no AOF, no RDB: empty
      const read = await store.read();
      await store.update((s) => ops.setNow(s, "after the restart"));
      const keys = await store.keys();
      const kept = await whereIs("a task worth keeping", paths, volatile.url, keys.state);
      expect({ notices: read.notices.filter((n) => n.includes(paths.stateJson)).length > 0, kept: kept.length > 0 }).toEqual({ notices: true, kept: true });
    } finally {
      await volatile.stop();
    }
  });

  // Was: `store push` decides "the target is fresh" from a read taken outside the target's lock
  // (copyState: `fresh = (await target.read()).source === "missing"`, then target.update). A state
  // another valarmind writes in between is overwritten without --force and lost, and the push
  // reports success. (src/store/store-transfer.ts copyState: decide freshness inside the mutation,
  // i.e. from `current`/the fetched value under the lock.)
  test("store push without --force never overwrites a state written after its first look", async () => {
    const paths = await workspace();
    await new FileStateStore(paths, { clock: () => at }).update((s) => ops.setGoal(s, "from the file"));
    const other = new RedisStateStore(paths, url, { keepLocalCopy: false });
    const keys = await other.keys();
    // The push's lock request (SET … NX) is held until another session has written the state.
    const relay = await holdingRelay(server.port, "\r\nNX\r\n", async () => {
      await other.update((s) => ops.addTask(s, "written meanwhile", {}, at));
    });
    try {
      const outcome = await runStorePush({ force: false, url: `redis://:${PW}@127.0.0.1:${relay.port}` }, paths).then(
        (line) => line,
        (e: unknown) => e,
      );
      expect(relay.fired()).toBe(true);
      const onServer = JSON.parse(String(await redisCommand(url, "GET", [keys.state])));
      expect({ refused: outcome instanceof ValarmindError, tasks: onServer.tasks_open.map((t: { title: string }) => t.title) }).toEqual({
        refused: true,
        tasks: ["written meanwhile"],
      });
    } finally {
      await relay.close();
    }
  });

  // Was: a store URL that is rejected (Valkey's own valkey:// scheme, redis+tls://, a space in the
  // password) is echoed whole, password included, by three messages: resolveStoreChoice
  // (src/store/create-state-store.ts), envLayer and readLayer's schema error
  // (src/config/load-settings.ts). docs/security.md: "Messages name the server without the URL's
  // user name and password." Fix: show the value through a userinfo-stripping function.
  test("a rejected store URL is never echoed with its password", async () => {
    const paths = await workspace();
    const bad = `valkey://:${PW}@127.0.0.1:${server.port}`;
    const outputs: Record<string, string> = {};
    outputs["state show, VALARMIND_STORE"] = (await runCli(["state", "show"], { cwd: paths.root, env: { VALARMIND_STORE: bad } })).stderr;
    outputs["chat, VALARMIND_STORE"] = (await runCli(["chat", "-p", "hi"], { cwd: paths.root, env: { VALARMIND_STORE: bad } })).stderr;
    const config = await makeTempDir("valarmind-audit-usercfg-");
    await mkdir(join(config, "valarmind"), { recursive: true });
    await writeFile(join(config, "valarmind", "config.json"), JSON.stringify({ store: bad }));
    outputs["state show, user config"] = (await runCli(["state", "show"], { cwd: paths.root, env: { XDG_CONFIG_HOME: config } })).stderr;
    for (const text of Object.values(outputs)) expect(text).toContain("127.0.0.1"); // each one did reject it
    expect(Object.entries(outputs).filter(([, text]) => text.includes(PW)).map(([where]) => where)).toEqual([]);
  });
  // Was: `chat --trust` applied every setting of the project file for that run except its
  // projectId: the store took the id from the stored trust alone, so in a folder trusted only by
  // the flag the session read and wrote the shared state under another project's keys (or failed
  // with "no git remote 'origin' and no projectId"). (src/store/create-state-store.ts)
  test("chat --trust uses the project file's projectId for that run; without trust it does not", async () => {
    const root = await makeTempDir("valarmind-audit-flagtrust-");
    await mkdir(join(root, ".git"), { recursive: true });
    await mkdir(join(root, ".valarmind"), { recursive: true });
    await writeFile(join(root, ".valarmind", "config.json"), JSON.stringify({ projectId: "team-flag" }));
    await new RedisStateStore(workspacePaths(root), url, { projectId: "team-flag" }).update((s) => ops.setGoal(s, "goal kept under team-flag"));
    const model = startFakeResponsesServer();
    try {
      model.setResponder(() => textStream("ok"));
      const env = { VALARMIND_STORE: url, XDG_CONFIG_HOME: await makeTempDir("valarmind-audit-flagtrust-config-") };
      const trusted = await chat(["-p", "hi", "--trust"], { cwd: root, server: model, env });
      expect(trusted.code).toBe(0);
      expect(model.requests.at(-1)?.raw ?? "").toContain("goal kept under team-flag");
      const untrusted = await chat(["-p", "hi"], { cwd: root, server: model, env });
      // No origin and the project's id ignored: the store cannot tell which project this is, and says so.
      expect(untrusted.code).toBe(2);
      expect(untrusted.stderr).toContain("no git remote 'origin' and no projectId");
    } finally {
      await model.close();
    }
  });
});
