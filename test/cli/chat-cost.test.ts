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
import { isFoldRequest } from "../agent/support/cost-model.ts";

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

  test("a run whose settle step folds the window: usage.fold is that request's part, included in the totals", async () => {
    const foldUsage = { input_tokens: 30_000, cached_tokens: 29_952, output_tokens: 70, reasoning_tokens: 0 };
    const turnUsage = { input_tokens: 8_000, cached_tokens: 6_144, output_tokens: 4_000, reasoning_tokens: 0 };
    // Long answers, kept whole (no gist, ADR 0087), make keeping old turns dear, so the window folds after a few turns.
    server.setResponder((body) => (isFoldRequest(body) ? textStream("- earlier: long answers about the app", { usage: foldUsage }) : textStream("the app is fine. ".repeat(1500), { usage: turnUsage })));
    const xdg = await userConfig({ windowBlockTurns: 1, windowAnswerTokens: 0 });
    let folded: { usage: Record<string, unknown> } | undefined;
    for (let n = 0; n < 8 && !folded; n++) {
      const r = await chat([...(n > 0 ? ["--continue"] : []), "-p", `question ${n}`, "--output-format", "json"], { cwd: root, server, env: { XDG_CONFIG_HOME: xdg } });
      expect(r.code).toBe(0);
      const result = JSON.parse(r.stdout) as { usage: { fold: Record<string, number> } & Record<string, unknown> };
      if ((result.usage.fold.requests ?? 0) > 0) folded = result;
      else expect(result.usage.fold).toEqual({ requests: 0, input_tokens: 0, cached_tokens: 0, output_tokens: 0 });
    }
    expect(folded?.usage).toMatchObject({
      requests: 2,
      input_tokens: 38_000,
      cached_tokens: 36_096,
      output_tokens: 4_070,
      fold: { requests: 1, input_tokens: 30_000, cached_tokens: 29_952, output_tokens: 70 },
    });
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
