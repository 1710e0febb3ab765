/**
 * Fault test: the Redis/Valkey server of the shared state store goes away in the middle of a state
 * change, or before (or during) a read. Against a real redis-server on loopback (test/store/
 * redis-server.ts; skipped, saying so, when it is not installed), with the append-only file and
 * `appendfsync always`, so that a restart on the same port and data dir shows what reached the
 * server. What must hold:
 * - the operation ends (the client has no offline queue and no reconnect) with a
 *   StoreUnreachableError: a ValarmindError naming the URL without credentials and saying what
 *   happened to the state, with a hint; never a raw Redis error or a stack trace;
 * - after the restart the state is entirely the old version or entirely the new one (the JSON text
 *   and its version counter agree), the local copy was not changed by the failed change, and the
 *   next change succeeds (a leftover lock keeps its expiry across the restart).
 */
import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { connect, createServer, type Socket } from "node:net";
import { basename } from "node:path";
import { workspacePaths, type WorkspacePaths } from "../../src/config/paths.ts";
import { ValarmindError } from "../../src/errors.ts";
import * as ops from "../../src/state/ops.ts";
import type { WorkingState } from "../../src/state/schema.ts";
import { displayRedisUrl, StoreUnreachableError } from "../../src/store/redis-connection.ts";
import { RedisStateStore, type StateKeys } from "../../src/store/redis-state-store.ts";
import { cleanupTempDirs, makeTempDir, runCli } from "../support/cli.ts";
import { REDIS_BINARY, redisCommand, startRedis, type RedisServer } from "./redis-server.ts";

const at = new Date("2026-03-01T08:00:00.000Z");
/** Short, so that a lock left behind by a change cut off with the server does not slow the next one. */
const LOCK_TTL_MS = 1_000;
const HINT = "Start the server or check the URL (setting 'store' or VALARMIND_STORE): a wrong password, or rediss:// to a server without TLS, shows as a closed connection too. 'VALARMIND_STORE=file' works from the local file meanwhile.";

const servers = new Set<RedisServer>();
const relays = new Set<Relay>();
afterEach(async () => {
  await Promise.all([...relays].map((r) => r.close()));
  relays.clear();
  // SIGKILL also ends a SIGSTOPped server; stopping one that is already dead only reaps it.
  await Promise.all([...servers].map((s) => s.stop("SIGKILL")));
  servers.clear();
});
afterAll(cleanupTempDirs);

/** A redis-server whose every write is in the append-only file before its reply (restartable with `port`). */
async function durableServer(dataDir: string, port?: number): Promise<RedisServer> {
  const server = await startRedis(dataDir, { aofDir: dataDir, ...(port !== undefined && { port }) });
  servers.add(server);
  return server;
}

async function serverPid(url: string): Promise<number> {
  const info = String(await redisCommand(url, "INFO", ["server"]));
  const pid = Number(/process_id:(\d+)/.exec(info)?.[1]);
  if (!Number.isSafeInteger(pid) || pid <= 0) throw new Error(`no process_id in INFO server: ${info}`);
  return pid;
}

/** True once `pid` has exited (a zombie has already closed its sockets) or is gone. */
function exitedSync(pid: number): boolean {
  if (process.platform === "linux") {
    try {
      return /^\d+ \(.*\) [ZX]/s.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
    } catch {
      return true;
    }
  }
  const stat = Bun.spawnSync(["ps", "-o", "stat=", "-p", String(pid)]).stdout.toString().trim();
  return stat === "" || stat.startsWith("Z");
}

/** SIGKILLs the server and returns once it is dead: usable inside a (synchronous) state mutation. */
function killNow(pid: number): void {
  process.kill(pid, "SIGKILL");
  const deadline = Date.now() + 5_000;
  while (!exitedSync(pid)) {
    if (Date.now() > deadline) throw new Error(`redis-server ${pid} did not exit after SIGKILL`);
    Bun.sleepSync(1);
  }
}

async function git(cwd: string, args: string[]): Promise<void> {
  const proc = Bun.spawn(["git", ...args], { cwd, stdout: "ignore", stderr: "pipe", env: { ...process.env, GIT_TERMINAL_PROMPT: "0" } });
  if ((await proc.exited) !== 0) throw new Error(`git ${args.join(" ")} failed: ${await new Response(proc.stderr).text()}`);
}

/** A git workspace with an origin of its own, so the CLI (which has no projectId here) finds its keys too. */
async function workspace(): Promise<WorkspacePaths> {
  const dir = await makeTempDir("valarmind-redis-ws-");
  await git(dir, ["init", "-q"]);
  await git(dir, ["remote", "add", "origin", `https://example.com/org/${basename(dir)}.git`]);
  return workspacePaths(dir);
}

interface Snapshot {
  state: unknown;
  version: unknown;
}

async function snapshot(url: string, keys: StateKeys): Promise<Snapshot> {
  return { state: await redisCommand(url, "GET", [keys.state]), version: await redisCommand(url, "GET", [keys.version]) };
}

/** The user-facing shape of "the server went away": named URL (no credentials), what happened, a hint, no stack. */
function expectUnreachable(error: unknown, url: string, whatHappened: RegExp): StoreUnreachableError {
  expect(error).toBeInstanceOf(StoreUnreachableError);
  expect(error).toBeInstanceOf(ValarmindError);
  const e = error as StoreUnreachableError;
  expect(e.exitCode).toBe(1);
  expect(e.url).toBe(url);
  expect(e.message.startsWith(`cannot reach the state store ${displayRedisUrl(url)} (`)).toBe(true);
  expect(e.message).toMatch(whatHappened);
  expect(e.message).not.toContain("\n"); // one line: no stack frames, no dumped reply
  expect(e.message).not.toMatch(/\bat .*:\d+:\d+/);
  expect(e.hint).toBe(HINT);
  return e;
}

/**
 * A TCP relay in front of the server that cuts a connection where a request containing `marker`
 * passes: "request" drops that request (it never reaches the server), "reply" forwards it and
 * withholds the server's reply. `onCut` (e.g. killing the server) runs before valarmind's socket is
 * closed. Lets the tests cut a change between "applied on the server" and "acknowledged".
 */
interface Relay {
  url: string;
  cuts(): number;
  close(): Promise<void>;
}

async function startRelay(targetPort: number, rule: { marker: string; cut: "request" | "reply"; onCut?: () => Promise<void> }): Promise<Relay> {
  const sockets = new Set<Socket>();
  let cuts = 0;
  const server = createServer((client) => {
    const upstream = connect(targetPort, "127.0.0.1");
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("error", () => {});
      socket.on("close", () => sockets.delete(socket));
    }
    let seen = "";
    let withholdReply = false;
    let cutting = false;
    const cut = async () => {
      cutting = true;
      cuts++;
      await rule.onCut?.();
      client.destroy();
      upstream.destroy();
    };
    client.on("data", (chunk: Buffer) => {
      if (cutting) return;
      seen += chunk.toString("latin1");
      if (seen.includes(rule.marker)) {
        seen = "";
        if (rule.cut === "request") return void cut();
        withholdReply = true;
      }
      upstream.write(chunk);
    });
    upstream.on("data", (chunk: Buffer) => {
      if (cutting) return;
      if (withholdReply) return void cut();
      client.write(chunk);
    });
    client.on("close", () => cutting || upstream.destroy());
    upstream.on("close", () => cutting || client.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const address = server.address();
  if (typeof address !== "object" || !address) throw new Error("relay: no address");
  const relay: Relay = {
    url: `redis://127.0.0.1:${address.port}`,
    cuts: () => cuts,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  relays.add(relay);
  return relay;
}

/** The old version every change test starts from: a goal and a task, version 2. */
async function seed(url: string, paths: WorkspacePaths): Promise<{ keys: StateKeys; before: Snapshot; localBefore: string }> {
  const store = new RedisStateStore(paths, url, { clock: () => at });
  await store.update((s) => ops.setGoal(s, "old goal"));
  await store.update((s) => ops.addTask(s, "old task", {}, at));
  const keys = await store.keys();
  const before = await snapshot(url, keys);
  expect(before.version).toBe("2");
  return { keys, before, localBefore: await readFile(paths.stateJson, "utf8") };
}

/** The new version a cut-off change tries to write: two fields at once, so a torn mix would show. */
function newVersion(s: WorkingState) {
  const goal = ops.setGoal(s, "new goal");
  return ops.addTask(goal.state, "new task", {}, at);
}

/** After the restart: valid, and entirely `expected`; a leftover lock kept its short expiry; the next change lands. */
async function expectRecovered(url: string, paths: WorkspacePaths, keys: StateKeys, expected: Snapshot): Promise<void> {
  const after = await snapshot(url, keys);
  expect(after).toEqual(expected);
  const read = await new RedisStateStore(paths, url).readFromServer();
  expect(read.source).toBe("file");
  expect(read.raw).toBe(expected.state as string);
  const pttl = Number(await redisCommand(url, "PTTL", [keys.lock]));
  expect(pttl === -2 || (pttl > 0 && pttl <= LOCK_TTL_MS)).toBe(true); // gone, or still expiring: never a lock without expiry
  const next = await new RedisStateStore(paths, url).update((s) => ops.setNow(s, "after the restart"));
  expect(next.written).toBe(true);
  expect(await redisCommand(url, "GET", [keys.version])).toBe(String(Number(expected.version) + 1));
  expect(await redisCommand(url, "EXISTS", [keys.lock])).toBe(0);
  const final = (await new RedisStateStore(paths, url).readFromServer()).state;
  expect(final.now).toBe("after the restart");
  expect(final.goal).toBe((read.state as WorkingState).goal);
  expect(final.tasks_open.map((t) => t.title)).toEqual(read.state.tasks_open.map((t) => t.title));
}

describe.skipIf(!REDIS_BINARY)("the Redis server goes away in the middle of a state change", () => {
  test("SIGKILL after the lock was taken and the state read, before the write: a clear error; after a restart the old version, and the next change lands", async () => {
    const data = await makeTempDir("valarmind-redis-data-");
    const paths = await workspace();
    const first = await durableServer(data);
    const { keys, before, localBefore } = await seed(first.url, paths);
    const pid = await serverPid(first.url);

    const store = new RedisStateStore(paths, first.url, { clock: () => at, lock: { ttlMs: LOCK_TTL_MS } });
    const seen: { state?: WorkingState } = {};
    const error = await store
      .update((s) => {
        seen.state = s;
        killNow(pid);
        return newVersion(s);
      })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(seen.state?.goal).toBe("old goal"); // the mutation ran: the lock was held and the state read
    expectUnreachable(error, first.url, /; the change may or may not have reached it; the local copy .*state\.json was not changed \(check with 'valarmind state show'\)$/);
    expect(await readFile(paths.stateJson, "utf8")).toBe(localBefore);

    await first.stop("SIGKILL"); // reaps it
    const restarted = await durableServer(data, first.port);
    // The write was never sent: entirely the old version (state and version counter).
    await expectRecovered(restarted.url, paths, keys, before);
  }, 20_000);

  test("SIGKILL after the write was applied, before its reply arrived: 'may or may not have reached it'; after a restart entirely the new version", async () => {
    const data = await makeTempDir("valarmind-redis-data-");
    const paths = await workspace();
    let server = await durableServer(data);
    const { keys, before, localBefore } = await seed(server.url, paths);
    // The new goal's text is only in the write's request; the reply to it is held back while the server dies.
    const relay = await startRelay(server.port, { marker: "new goal", cut: "reply", onCut: () => server.stop("SIGKILL") });
    const store = new RedisStateStore(paths, relay.url, { clock: () => at, lock: { ttlMs: LOCK_TTL_MS } });
    const error = await store.update(newVersion).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(relay.cuts()).toBe(1);
    expectUnreachable(error, relay.url, /; the change may or may not have reached it; the local copy .*state\.json was not changed/);
    expect(await readFile(paths.stateJson, "utf8")).toBe(localBefore); // not acknowledged: the local copy stays

    server = await durableServer(data, server.port);
    const after = await snapshot(server.url, keys);
    // Applied and in the append-only file before the reply: entirely the new version.
    expect(after.version).toBe("3");
    const state = JSON.parse(String(after.state)) as WorkingState;
    expect(state.goal).toBe("new goal");
    expect(state.tasks_open.map((t) => t.title)).toEqual(["old task", "new task"]);
    expect(after).not.toEqual(before);
    await expectRecovered(server.url, paths, keys, after);
  }, 20_000);

  test("SIGKILL while waiting for another holder's lock: ends at once with 'nothing was changed', not after the lock wait", async () => {
    const data = await makeTempDir("valarmind-redis-data-");
    const paths = await workspace();
    const first = await durableServer(data);
    const { keys, before, localBefore } = await seed(first.url, paths);
    // Held for longer than the test, so our change can only be waiting when the server dies.
    await redisCommand(first.url, "SET", [keys.lock, "another-valarmind", "PX", "60000"]);
    const setCalls = async () => Number(/cmdstat_set:calls=(\d+)/.exec(String(await redisCommand(first.url, "INFO", ["commandstats"])))?.[1] ?? 0);
    const baseline = await setCalls();

    // A lock wait far longer than the test: only the lost connection can end it in time.
    const store = new RedisStateStore(paths, first.url, { clock: () => at, lock: { ttlMs: LOCK_TTL_MS, waitMs: 600_000 } });
    const outcome = store.update(newVersion).then(
      () => undefined,
      (e: unknown) => e,
    );
    while ((await setCalls()) < baseline + 2) await Bun.sleep(5); // it is retrying SET NX
    await first.stop("SIGKILL");
    expectUnreachable(await outcome, first.url, /; nothing was changed, on the server or in the local copy .*state\.json$/);
    expect(await readFile(paths.stateJson, "utf8")).toBe(localBefore);

    const restarted = await durableServer(data, first.port);
    // The other holder's lock is untouched (kept with its expiry); it finishes and releases it.
    expect(await redisCommand(restarted.url, "GET", [keys.lock])).toBe("another-valarmind");
    expect(Number(await redisCommand(restarted.url, "PTTL", [keys.lock]))).toBeGreaterThan(LOCK_TTL_MS);
    await redisCommand(restarted.url, "DEL", [keys.lock]);
    await expectRecovered(restarted.url, paths, keys, before);
  }, 20_000);

  // A server that stops answering without closing the connection (SIGSTOP, a network partition, a
  // hung host) after the lock was taken: the client's idle timeout (IDLE_TIMEOUT_MS) ends the
  // change; without it update() stayed pending forever.
  test("a server that stops answering mid-change (SIGSTOP) ends the change with a clear error within the store's timeouts", async () => {
    const data = await makeTempDir("valarmind-redis-data-");
    const paths = await workspace();
    const server = await durableServer(data);
    await seed(server.url, paths);
    const pid = await serverPid(server.url);
    const store = new RedisStateStore(paths, server.url, { clock: () => at, lock: { ttlMs: LOCK_TTL_MS, waitMs: 1_000 } });
    try {
      const outcome = store
        .update((s) => {
          process.kill(pid, "SIGSTOP");
          return newVersion(s);
        })
        .then(
          () => "resolved",
          (e: unknown) => e,
        );
      // The store's longest bound is the 15 s lock wait (1 s here) plus the 3 s connect timeout.
      const result = await Promise.race([outcome, Bun.sleep(20_000).then(() => "still pending after 20 s")]);
      expectUnreachable(result, server.url, /the change may or may not have reached it/);
    } finally {
      process.kill(pid, "SIGCONT");
    }
  }, 30_000);
});

describe.skipIf(!REDIS_BINARY)("the Redis server is gone before or during a read", () => {
  test("stopped before a read: the error names the URL without credentials, says nothing was read, and has a hint; the CLI prints it without a stack", async () => {
    const dir = await makeTempDir("valarmind-redis-data-");
    const withCopy = await workspace();
    const withoutCopy = await workspace();
    const server = await startRedis(dir);
    servers.add(server);
    await new RedisStateStore(withCopy, server.url).update((s) => ops.setGoal(s, "kept locally"));
    await server.stop("SIGTERM");
    const url = `redis://someone:hunter2@127.0.0.1:${server.port}/0`;
    const shown = `redis://127.0.0.1:${server.port}/0`;

    // The server's state, never the local copy (store pull): an error even with a local copy.
    const fromServer = await new RedisStateStore(withCopy, url)
      .readFromServer()
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    const e1 = expectUnreachable(fromServer, url, /; nothing was read or changed$/);
    expect(e1.message).toContain(shown);
    expect(e1.message).not.toContain("hunter2");

    // A plain read with no local copy to fall back on.
    const read = await new RedisStateStore(withoutCopy, url).read().then(
      () => undefined,
      (e: unknown) => e,
    );
    const e2 = expectUnreachable(read, url, /; and there is no local copy at .*state\.json to fall back on$/);
    expect(e2.message).toContain(withoutCopy.stateJson);
    expect(e2.message).not.toContain("hunter2");

    // What a user sees: the message and the hint, exit 1, no stack, no credentials.
    const cli = await runCli(["state", "show", "--json"], { cwd: withoutCopy.root, env: { VALARMIND_STORE: url } });
    expect(cli.code).toBe(1);
    expect(cli.stdout).toBe("");
    const lines = cli.stderr.trimEnd().split("\n");
    expect(lines[0]).toStartWith(`valarmind: cannot reach the state store ${shown} (`);
    expect(lines[0]).toContain(`no local copy at ${withoutCopy.stateJson}`);
    expect(lines).toContain(`  ${HINT}`);
    expect(cli.stderr).not.toContain("unexpected error");
    expect(cli.stderr).not.toMatch(/^\s+at /m);
    expect(cli.stderr).not.toContain("hunter2");
  }, 20_000);

  test("the connection drops in the middle of a read: read serves the local copy marked stale, readFromServer fails clearly; nothing changes", async () => {
    const dir = await makeTempDir("valarmind-redis-data-");
    const paths = await workspace();
    const server = await startRedis(dir);
    servers.add(server);
    const { keys, before, localBefore } = await seed(server.url, paths);
    // Every request naming the state key (the read's fetch) is dropped with its connection.
    const relay = await startRelay(server.port, { marker: keys.state, cut: "request" });

    const read = await new RedisStateStore(paths, relay.url).read();
    expect(relay.cuts()).toBe(1);
    expect(read.stale).toBe(true);
    expect(read.state.goal).toBe("old goal");
    expect(read.notices[0]).toStartWith(`the state store ${relay.url} is unreachable (`);
    expect(read.notices[0]).toContain(`using the last local copy ${paths.stateJson}, which may be stale`);

    const fromServer = await new RedisStateStore(paths, relay.url).readFromServer().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(relay.cuts()).toBe(2);
    expectUnreachable(fromServer, relay.url, /; nothing was read or changed$/);

    expect(await snapshot(server.url, keys)).toEqual(before);
    expect(await readFile(paths.stateJson, "utf8")).toBe(localBefore);
  }, 20_000);
});
