/**
 * Issue 10, item 7: a writer killed while holding the state lock must not block the next writer
 * for the 5 s stale time. The lock records its holder (pid, hostname); a dead holder on this host
 * is taken over at once, and the trace says so.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { acquireLock } from "../../src/state/lock.ts";
import { cleanupTempDirs, makeTempDir, readUntil, runCli, spawnCli } from "../support/cli.ts";

afterAll(cleanupTempDirs);

const STATE = ".valarmind/memory/state.json";

describe("the state lock of a killed writer", () => {
  test("is taken over at once: the next writer's trace shows the takeover and it does not wait for staleness", async () => {
    const dir = await makeTempDir();
    expect((await runCli(["init"], { cwd: dir })).code).toBe(0);
    const writer = spawnCli(["state", "goal", "never lands"], { cwd: dir, env: { VALARMIND_TEST_HOLD_AFTER_TEMP: "1" } });
    await readUntil(writer.stderr, (text) => text.includes("valarmind-test: temp written"));
    const owner = JSON.parse(readFileSync(join(dir, `${STATE}.lock`, "owner.json"), "utf8"));
    expect(owner).toEqual({ pid: writer.pid, hostname: hostname(), started: expect.any(Number) });
    writer.kill("SIGKILL");
    await writer.exited;

    const started = performance.now();
    const next = await runCli(["state", "now", "after the crash"], { cwd: dir, env: { VALARMIND_TRACE: "1" } });
    const elapsed = performance.now() - started;
    expect(next.code).toBe(0);
    expect(next.stderr).toContain(`state lock: took over ${join(dir, `${STATE}.lock`)} from pid ${writer.pid}, which no longer exists`);
    expect(elapsed).toBeLessThan(2_000); // the stale time is 5 s
    expect(JSON.parse(readFileSync(join(dir, STATE), "utf8")).now).toBe("after the crash");
    expect(existsSync(join(dir, `${STATE}.lock`))).toBe(false); // released with its owner file
  }, 20_000);

  test("a live holder's lock is not taken over (the second writer waits for the first)", async () => {
    const dir = await makeTempDir();
    expect((await runCli(["init"], { cwd: dir })).code).toBe(0);
    const writer = spawnCli(["state", "goal", "held"], { cwd: dir, env: { VALARMIND_TEST_HOLD_AFTER_TEMP: "1" } });
    await readUntil(writer.stderr, (text) => text.includes("valarmind-test: temp written"));
    const second = spawnCli(["state", "now", "second"], { cwd: dir, env: { VALARMIND_TRACE: "1" } });
    const secondDone = second.exited.then(() => "exited" as const);
    const holding = await Promise.race([secondDone, Bun.sleep(1_000).then(() => "waiting" as const)]);
    expect(holding).toBe("waiting");
    writer.kill("SIGKILL");
    expect(await second.exited).toBe(0);
    expect(await new Response(second.stderr).text()).toContain(`from pid ${writer.pid}`);
  }, 20_000);

  test("a holder on another host that stopped refreshing is taken over once stale (5 s), judged by the injected clock; a living one of this host never", async () => {
    const target = join(await makeTempDir(), "state.json");
    // pid 1 is alive on this host: a stopped holder (SIGSTOP, a suspended laptop) keeps its lock however old.
    mkdirSync(`${target}.lock`, { mode: 0o700 });
    writeFileSync(join(`${target}.lock`, "owner.json"), JSON.stringify({ pid: 1, hostname: hostname() }));
    const at = (ahead: number) => ({ waitMs: 0, now: () => Date.now() + ahead });
    await expect(acquireLock(target, at(60_000))).rejects.toThrow(`${target} is locked by another valarmind process`);

    // Another host's holder cannot be asked whether it lives: only staleness frees its lock.
    writeFileSync(join(`${target}.lock`, "owner.json"), JSON.stringify({ pid: 1, hostname: `not-${hostname()}` }));
    await expect(acquireLock(target, at(0))).rejects.toThrow(`${target} is locked by another valarmind process`);
    await expect(acquireLock(target, at(4_000))).rejects.toThrow(`${target} is locked by another valarmind process`);
    const lock = await acquireLock(target, at(5_001));
    expect(lock.compromised()).toBe(false);
    expect(JSON.parse(readFileSync(join(`${target}.lock`, "owner.json"), "utf8"))).toEqual({ pid: process.pid, hostname: hostname(), started: expect.any(Number) });
    await lock.release();
    expect(existsSync(`${target}.lock`)).toBe(false);
  });
});
