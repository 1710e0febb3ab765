import { afterAll, describe, expect, test } from "bun:test";
import { readFile, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { decode } from "@toon-format/toon";
import { countTokens } from "../../src/tokens/tokenizer.ts";
import { serializeState } from "../../src/state/store.ts";
import { state20x30, stress500 } from "../state/state-fixtures.ts";
import { cleanupTempDirs, makeTempDir, runCli } from "../support/cli.ts";

afterAll(cleanupTempDirs);

const STATE = ".valarmind/memory/state.json";
const TOON = ".valarmind/memory/state.toon";

async function workspaceWith(state: unknown): Promise<string> {
  const dir = await makeTempDir();
  await runCli(["init"], { cwd: dir });
  await writeFile(join(dir, STATE), typeof state === "string" ? state : `${JSON.stringify(state, null, 2)}\n`);
  return dir;
}

interface Report {
  toon_status: string;
  tokens: { json_pretty: number; json_compact: number; toon: number };
  toon_vs_compact_json: number;
  band: string;
  omitted: string[];
}

describe("valarmind compact", () => {
  test("writes state.toon that decodes to the projection; token counts are exact", async () => {
    const state = state20x30();
    const dir = await workspaceWith(serializeState(state));
    const r = await runCli(["compact", "--json"], { cwd: dir });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as Report;
    const toon = await readFile(join(dir, TOON), "utf8");
    expect(report.toon_status).toBe("written");
    expect(report.tokens).toEqual({
      json_pretty: await countTokens(serializeState(state)),
      json_compact: await countTokens(JSON.stringify(state)),
      toon: await countTokens(toon.trimEnd()),
    });
    expect(report.tokens.toon).toBeLessThanOrEqual(750);
    expect(report.toon_vs_compact_json).toBeLessThanOrEqual(0.7);
    expect(report.omitted).toContain("decisions_recent.why");
    const decoded = decode(toon) as { tasks_open: { id: string }[] };
    expect(decoded.tasks_open.map((t) => t.id)).toEqual(state.tasks_open.filter((t) => t.status !== "done").map((t) => t.id));
  });

  test("the text report lists what was left out; a second run leaves state.toon alone", async () => {
    const dir = await workspaceWith(stress500());
    const first = await runCli(["compact"], { cwd: dir });
    expect(first.code).toBe(0);
    expect(first.stdout).toContain(`wrote ${TOON}`);
    expect(first.stdout).toMatch(/left out to fit 750 tokens \(\d{3}\): decisions_recent\.why, T-/);
    const mtime = (await stat(join(dir, TOON))).mtimeMs;
    const second = await runCli(["compact"], { cwd: dir });
    expect(second.stdout).toContain("already up to date");
    expect((await stat(join(dir, TOON))).mtimeMs).toBe(mtime);
  });

  test("a near-empty state is reported below the floor, not padded", async () => {
    const dir = await makeTempDir();
    await runCli(["init"], { cwd: dir });
    await runCli(["state", "goal", "tiny"], { cwd: dir });
    const r = await runCli(["compact"], { cwd: dir });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("below the 250-token floor: the state is near-empty; nothing is padded");
    expect(JSON.parse((await runCli(["compact", "--json"], { cwd: dir })).stdout).band).toBe("below-floor");
  });

  test("--check exits 1 when state.toon is missing or stale, 0 when fresh, and writes nothing", async () => {
    const dir = await workspaceWith(state20x30());
    await rm(join(dir, TOON)); // init wrote it for the empty state
    const missing = await runCli(["compact", "--check"], { cwd: dir });
    expect(missing.code).toBe(1);
    expect(missing.stdout).toContain("is missing");
    await expect(stat(join(dir, TOON))).rejects.toThrow();
    expect((await runCli(["compact"], { cwd: dir })).code).toBe(0);
    expect((await runCli(["compact", "--check"], { cwd: dir })).code).toBe(0);
    await runCli(["state", "now", "something else"], { cwd: dir });
    const stale = await runCli(["compact", "--check", "--json"], { cwd: dir });
    expect(stale.code).toBe(1);
    expect(JSON.parse(stale.stdout).toon_status).toBe("stale");
  });

  test("--max-tokens tightens the cap; a bad value is a usage error", async () => {
    const dir = await workspaceWith(state20x30());
    const r = JSON.parse((await runCli(["compact", "--json", "--max-tokens", "300"], { cwd: dir })).stdout) as Report;
    expect(r.tokens.toon).toBeLessThanOrEqual(300);
    expect(r.omitted.length).toBeGreaterThan(10);
    const bad = await runCli(["compact", "--max-tokens", "lots"], { cwd: dir });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--max-tokens must be a positive integer");
  });

  test("without a working state it says to run init (exit 1)", async () => {
    const dir = await makeTempDir();
    const r = await runCli(["compact"], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("no working state at");
    expect(r.stderr).toContain("valarmind init");
  });

  test("an invalid state.json is reported (exit 2) and left where it is; state.toon is not touched", async () => {
    const dir = await workspaceWith("[1, 2");
    const toonBefore = await readFile(join(dir, TOON), "utf8");
    const r = await runCli(["compact"], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("not valid JSON");
    expect(r.stderr).toContain("Nothing was changed");
    expect(await readFile(join(dir, STATE), "utf8")).toBe("[1, 2");
    expect(await readFile(join(dir, TOON), "utf8")).toBe(toonBefore);
    expect(decode(toonBefore)).toMatchObject({ goal: "", tasks_open: [] });
  });
});
