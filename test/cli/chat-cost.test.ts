/**
 * What a run costs, as `chat -p --output-format json` reports it (issue 12): the usage of every
 * request, a fold's included, the cached share and effective input, and `total_cost_usd` once the
 * model's prices are set in the user's settings.
 */
import { afterAll, afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanupTempDirs, makeTempDir } from "../support/cli.ts";
import { startFakeResponsesServer, textStream, type FakeResponsesServer } from "../support/fake-responses-server.ts";
import { makeGitWorkspace } from "../agent/support/agent-harness.ts";
import { chat } from "../agent/support/cli-chat.ts";

let server: FakeResponsesServer;
let root: string;
beforeEach(async () => {
  server = startFakeResponsesServer();
  root = await makeGitWorkspace({ "README.md": "# app\n" });
});
afterEach(async () => {
  await server.close();
});
afterAll(cleanupTempDirs);

async function userConfig(settings: Record<string, unknown>): Promise<string> {
  const home = await makeTempDir("valarmind-xdg-");
  mkdirSync(join(home, "valarmind"), { recursive: true });
  writeFileSync(join(home, "valarmind", "config.json"), JSON.stringify(settings));
  return home;
}

describe("chat -p --output-format json: cost", () => {
  test("usage with cached share and effective input; no prices, no cost", async () => {
    server.enqueue(textStream("hello", { usage: { input_tokens: 5000, cached_tokens: 4096, output_tokens: 20, reasoning_tokens: 0 } }));
    const r = await chat(["-p", "hi", "--output-format", "json"], { cwd: root, server, env: { XDG_CONFIG_HOME: await userConfig({}) } });
    expect(r.code).toBe(0);
    const result = JSON.parse(r.stdout) as { usage: Record<string, number>; total_cost_usd: number | null };
    expect(result.usage).toMatchObject({ input_tokens: 5000, cached_tokens: 4096, output_tokens: 20, requests: 1, effective_input_tokens: Math.round(904 + 409.6) });
    expect(result.usage.cached_share).toBeCloseTo(4096 / 5000, 10);
    expect(result.total_cost_usd).toBeNull();
  });

  test("prices in the user's settings give total_cost_usd; a bad price is a clear settings error", async () => {
    server.enqueue(textStream("hello", { usage: { input_tokens: 1_000_000, cached_tokens: 500_000, output_tokens: 100_000, reasoning_tokens: 0 } }));
    const xdg = await userConfig({ prices: { input: 2, output: 8 } });
    const r = await chat(["-p", "hi", "--output-format", "json"], { cwd: root, server, env: { XDG_CONFIG_HOME: xdg } });
    expect(r.code).toBe(0);
    expect((JSON.parse(r.stdout) as { total_cost_usd: number }).total_cost_usd).toBeCloseTo(1 + 0.1 + 0.8, 10);

    const bad = await chat(["-p", "hi"], { cwd: root, server, env: { XDG_CONFIG_HOME: await userConfig({ prices: { input: -1, output: 8 } }) } });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("prices");
    expect(bad.stderr).not.toContain("    at ");
  });
});
