import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { workspacePaths } from "../../src/config/paths.ts";
import { buildRequest, exactCounter } from "../../src/prompt/builder.ts";
import { validateManifest, writeManifest } from "../../src/prompt/manifest.ts";
import { createSession } from "../../src/session/transcript.ts";
import { cleanupTempDirs, makeTempDir, runCli } from "../support/cli.ts";
import { jsonResponse, startFakeResponsesServer } from "../support/fake-responses-server.ts";
import { fullInput } from "../prompt/support/build-fixture.ts";
import { agentLikeRecords } from "../prompt/support/synthetic-session.ts";

afterAll(cleanupTempDirs);

/** A workspace with a 30-turn session (as the agent writes it) and VALARMIND.md. */
async function workspaceWithSession(): Promise<string> {
  const root = await makeTempDir();
  const paths = workspacePaths(root);
  mkdirSync(paths.memoryDir, { recursive: true });
  writeFileSync(paths.instructions, "# Rules\n\nUse bun.\n");
  const session = createSession(paths, { model: "gpt-5.5", cwd: root, id: "cli12345", now: new Date("2026-01-31T12:00:00Z") });
  session.append(await agentLikeRecords({ turns: 30, shortBufferTurns: 24, windowBlockTurns: 8, countTokens: await exactCounter() }));
  session.close();
  return root;
}

describe("valarmind prompt --dry-run", () => {
  let root = "";
  beforeAll(async () => {
    root = await workspaceWithSession();
  });

  test("prints a readable report of the next request and writes nothing", async () => {
    const before = readdirSync(join(root, ".valarmind", "sessions"));
    const r = await runCli(["prompt", "--dry-run", "fix", "src/lexer.ts", "please"], { cwd: root });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("dry run — built offline, nothing sent or written");
    expect(r.stdout).toContain("session cli12345 · turn 31 · step 1");
    expect(r.stdout).toMatch(/budget {2}\[[█▓░ ]+\] {2}[\d,]+ \/ 24,000 tokens \(\d+%\)/);
    expect(r.stdout).toContain("VALARMIND.md");
    // Default window: at most 20 turns; the 30-turn session's older turns are folded for this preview; the rest, up to turn 30, is the window.
    expect(r.stdout).toMatch(/conversation +\d+ turns \(turns \d+–30\)/);
    expect(r.stdout).toContain("cut to fit: nothing (within budget)");
    expect(r.stdout).not.toContain("\x1b[");
    expect(readdirSync(join(root, ".valarmind", "sessions"))).toEqual(before);
  });

  test("--json prints a valid manifest; --show-prompt the exact stateless request body", async () => {
    const json = await runCli(["prompt", "--dry-run", "--json", "next step"], { cwd: root });
    expect(json.code).toBe(0);
    const manifest = await validateManifest(JSON.parse(json.stdout), "stdout");
    expect(manifest).toMatchObject({ session: "cli12345", turn: 31, prompt_cache_key: "valarmind-cli12345" });
    const regions = manifest.items.map((i) => i.region);
    expect(manifest.items.find((i) => i.id === "task:message")).toMatchObject({ region: "task" });
    expect(regions.indexOf("task")).toBeGreaterThan(regions.indexOf("conversation"));
    expect(regions.at(-1)).toBe("context");

    const body = await runCli(["prompt", "--show-prompt", "next step"], { cwd: root });
    expect(body.code).toBe(0);
    const request = JSON.parse(body.stdout);
    expect(request.store).toBe(false);
    expect(request.previous_response_id).toBeUndefined();
    expect(request.prompt_cache_key).toBe("valarmind-cli12345");
    // The user's message, then this turn's data (time, touched files) after it (ADR 0074).
    expect(request.input.at(-2)).toEqual({ type: "message", role: "user", content: "next step" });
    expect(request.input.at(-1).content).toStartWith("<volatile_context");
    expect(request.tools.map((t: { name: string }) => t.name)).toContain("read_file");
  });

  test("--budget below what must stay is a clear error, exit 2 as chat's; below 1000 it is refused as chat refuses it", async () => {
    const r = await runCli(["prompt", "--dry-run", "--budget", "1500", "hi"], { cwd: root });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("over the budget of 1500");
    expect(r.stderr).toContain("Raise maxContextTokens");
    for (const budget of ["200", "10", "x"]) {
      const refused = await runCli(["prompt", "--dry-run", "--budget", budget, "hi"], { cwd: root });
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain(`--budget must be an integer of at least 1000 tokens, got '${budget}'`);
    }
  });

  test("a tight --budget shows what was cut and why", async () => {
    const r = await runCli(["prompt", "--dry-run", "--budget", "3500", "hi"], { cwd: root });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("cut to fit the budget of 3,500:");
    expect(r.stdout).toContain("✂ fold_window");
    expect(r.stdout).toMatch(/- folded_into_summary ×\d+ [\d,]+ tokens: turn:\d+, turn:\d+, /);
  });

  test("works in a workspace without sessions", async () => {
    const empty = await makeTempDir();
    const r = await runCli(["prompt", "hello"], { cwd: empty });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("session new · turn 1");
    expect(r.stdout).toContain("note: no session yet in this workspace");
    expect(existsSync(join(empty, ".valarmind"))).toBe(false);
  });

  test("--tokens api asks POST /responses/input_tokens and shows it beside the local count", async () => {
    const server = startFakeResponsesServer();
    try {
      server.enqueueInputTokens(jsonResponse({ object: "response.input_tokens", input_tokens: 4321 }));
      const r = await runCli(["prompt", "--tokens", "api", "count me"], { cwd: root, env: { OPENAI_BASE_URL: server.baseURL, OPENAI_API_KEY: "test-key" } });
      expect(r.stderr).toBe("");
      expect(r.stdout).toMatch(/api {5}input_tokens 4,321 \(local [\d,]+, [+-][\d,]+\)/);
      const sent = server.tokenCountRequests[0]?.body;
      expect(sent?.model).toBe("gpt-5.5");
      expect(JSON.stringify(sent?.input)).toContain("count me");
    } finally {
      await server.close();
    }
  });
});

describe("valarmind prompt --list / --show / --diff", () => {
  let root = "";
  beforeAll(async () => {
    root = await makeTempDir();
    const paths = workspacePaths(root);
    const session = createSession(paths, { model: "gpt-5.5", cwd: root, id: "hist0001" });
    session.close();
    const first = await buildRequest(await fullInput({ sessionId: "hist0001", turn: 37 }));
    const second = await buildRequest(await fullInput({ sessionId: "hist0001", turn: 37, step: 2, task: { userText: "Now fix the lexer in src/lexer.ts too.", items: [{ kind: "tool", callId: "c1", name: "read_file", arguments: '{"path":"src/lexer.ts"}', output: "export const x = 1;", isError: false }] } }));
    await writeManifest(session.dir, first.manifest);
    await writeManifest(session.dir, { ...second.manifest, usage: { input: 9000, cached: 7936, output: 50, reasoning: 0 } });
  });

  test("--list shows the session's calls with totals and cached share", async () => {
    const r = await runCli(["prompt", "--list"], { cwd: root });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("session hist0001 · 2 manifests");
    expect(r.stdout).toMatch(/ 1 {2}turn 37·1 .* 0037-01\.json/);
    expect(r.stdout).toMatch(/ 2 {2}turn 37·2 .* 88% .* 0037-02\.json/);
  });

  test("--show N prints one manifest, with usage", async () => {
    const r = await runCli(["prompt", "--show", "2"], { cwd: root });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("usage   input 9,000 (cached 7,936, 88%)");
    expect(r.stdout).toContain("1 step of this turn");
    const json = await runCli(["prompt", "--show", "-1", "--json"], { cwd: root });
    expect(JSON.parse(json.stdout)).toMatchObject({ turn: 37, step: 2 });
  });

  test("--diff A B shows what changed and the unchanged prefix", async () => {
    const r = await runCli(["prompt", "--diff", "1", "2"], { cwd: root });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("diff turn 37·1 (0037-01.json) → turn 37·2 (0037-02.json)");
    expect(r.stdout).toMatch(/unchanged prefix of B: [\d,]+ content tokens \(99\.\d%\)/);
    expect(r.stdout).toMatch(/\+ task:call:c1 +\+\d+/);
  });

  test("bad selectors and mixed modes are usage errors with a hint", async () => {
    const one = await runCli(["prompt", "--diff", "1"], { cwd: root });
    expect(one.code).toBe(2);
    expect(one.stderr).toContain("--diff takes exactly two manifests");
    const missing = await runCli(["prompt", "--show", "9"], { cwd: root });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("no manifest '9' in this session (it has 2)");
    const mixed = await runCli(["prompt", "--list", "--show", "1"], { cwd: root });
    expect(mixed.code).toBe(2);
    const none = await runCli(["prompt", "--list"], { cwd: await makeTempDir() });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("no manifests to inspect");
  });
});
