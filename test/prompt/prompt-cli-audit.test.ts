/**
 * Fault-finding pass over `valarmind prompt` (dry run, --json, --show-prompt, --list, --show,
 * --diff, --budget, --tokens api) and the manifest files every model call writes, as a hostile
 * tester and a careless user would drive them: the real CLI, spawned, against the fake Responses
 * server. What test/cli/prompt.test.ts, test/cli/prompt-terminal-safe.test.ts,
 * test/faults/hostile-session-files.test.ts and test/cli/memory-commands-audit.test.ts already
 * cover is not repeated here.
 *
 * Each defect this pass found is fixed; a test's "Was:" comment says what the user saw before.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { workspacePaths } from "../../src/config/paths.ts";
import { exactCounter } from "../../src/prompt/builder.ts";
import { validateManifest } from "../../src/prompt/manifest.ts";
import type { Manifest } from "../../src/prompt/manifest-schema.ts";
import { createSession } from "../../src/session/transcript.ts";
import { cleanupTempDirs, makeTempDir, runCli, type CliResult } from "../support/cli.ts";
import { jsonResponse, lastUserText, startFakeResponsesServer, textStream, type FakeResponsesServer } from "../support/fake-responses-server.ts";
import { makeGitWorkspace } from "../agent/support/agent-harness.ts";
import { chat, chatEnv } from "../agent/support/cli-chat.ts";
import { agentLikeRecords } from "./support/synthetic-session.ts";

const STACK = /^\s+at /m;

let server: FakeResponsesServer;
/** A git workspace with one session of two real turns (two manifests); never changed after beforeAll. */
let base = "";

beforeAll(async () => {
  server = startFakeResponsesServer();
  server.setResponder((body) => textStream(`echo: ${lastUserText(body)}`));
  base = await makeGitWorkspace({ "README.md": "# demo\n" });
  expect((await chat(["-p", "one"], { cwd: base, server })).code).toBe(0);
  expect((await chat(["--continue", "-p", "two"], { cwd: base, server })).code).toBe(0);
});

afterAll(async () => {
  await server.close();
  await cleanupTempDirs();
});

function prompt(cwd: string, args: readonly string[], options: { env?: Record<string, string | undefined>; stdin?: string } = {}): Promise<CliResult> {
  return runCli(["prompt", ...args], { cwd, env: { ...chatEnv({ server }), ...options.env }, ...(options.stdin !== undefined && { stdin: options.stdin }) });
}

function sessionDir(root: string): { id: string; dir: string; manifests: string } {
  const sessions = join(root, ".valarmind", "sessions");
  const id = readdirSync(sessions, { withFileTypes: true }).find((e) => e.isDirectory() || e.isSymbolicLink())?.name;
  if (!id) throw new Error(`no session directory under ${sessions}`);
  return { id, dir: join(sessions, id), manifests: join(sessions, id, "manifests") };
}

/** A private copy of the base workspace, for tests that change files. */
async function copyOfBase(): Promise<{ root: string; id: string; manifests: string }> {
  const root = join(realpathSync(await makeTempDir("valarmind-audit-")), "repo");
  cpSync(base, root, { recursive: true });
  const { id, manifests } = sessionDir(root);
  return { root, id, manifests };
}

function readJson<T = Record<string, unknown>>(file: string): T {
  return JSON.parse(readFileSync(file, "utf8")) as T;
}

function itemsAddUp(m: Manifest): void {
  expect({ id: m.turn, sum: m.items.reduce((n, i) => n + i.tokens, 0) + m.framing_tokens }).toEqual({ id: m.turn, sum: m.total_tokens });
  expect(m.stable_prefix_tokens).toBeLessThanOrEqual(m.total_tokens);
}

/** The local time the volatile context shows, to the minute ("2026-01-31 Sat 12:34 (UTC+00:00)"). */
const MINUTE = /\d{4}-\d\d-\d\d \w{3} \d\d:\d\d \(UTC[^)]*\)/g;

describe("the dry run is the next real call", () => {
  test("--show-prompt --json gives the request and manifest that the next `chat --continue -p` sends and records", async () => {
    const { root, manifests } = await copyOfBase();
    for (let attempt = 0; ; attempt++) {
      const message = `audit message ${attempt}: look at @README.md`;
      const dry = await prompt(root, ["--dry-run", "--show-prompt", "--json", message]);
      expect(dry.stderr).toBe("");
      expect(dry.code).toBe(0);
      const planned = JSON.parse(dry.stdout) as { manifest: Manifest; request: Record<string, unknown> };
      const before = server.requests.length;
      const real = await chat(["--continue", "-p", message], { cwd: root, server });
      expect(real.code).toBe(0);
      expect(server.requests.length).toBe(before + 1);
      const { stream, ...sent } = server.requests.at(-1)?.body ?? {};
      expect(stream).toBe(true);
      const plannedText = JSON.stringify(planned.request);
      const sentText = JSON.stringify(sent);
      // The two runs straddled a minute: the volatile context's clock moved on. Try once more.
      if (JSON.stringify(plannedText.match(MINUTE)) !== JSON.stringify(sentText.match(MINUTE)) && attempt === 0) continue;
      expect(sent).toEqual(planned.request);

      const written = readJson<Manifest>(join(manifests, readdirSync(manifests).sort().at(-1) ?? ""));
      const { timestamp: _a, usage, ...recorded } = written;
      const { timestamp: _b, ...previewed } = planned.manifest;
      expect(usage).toBeDefined();
      expect(recorded).toEqual(previewed);
      return;
    }
  }, 30_000);

  test("item tokens plus framing add up to the total, and the cut steps chain down to it (dry runs and written manifests)", async () => {
    const root = await makeTempDir();
    const paths = workspacePaths(root);
    mkdirSync(paths.memoryDir, { recursive: true });
    const session = createSession(paths, { model: "gpt-5.5", cwd: root, id: "sums0001" });
    session.append(await agentLikeRecords({ turns: 30, shortBufferTurns: 24, windowBlockTurns: 8, countTokens: await exactCounter() }));
    session.close();
    for (const budget of ["24000", "3500", "2500"]) {
      const r = await prompt(root, ["--json", "--budget", budget, "hi"]);
      expect({ budget, code: r.code, stderr: r.stderr }).toEqual({ budget, code: 0, stderr: "" });
      const m = await validateManifest(JSON.parse(r.stdout), `dry run --budget ${budget}`);
      itemsAddUp(m);
      expect(m.total_tokens).toBeLessThanOrEqual(Number(budget));
      m.cutoff_steps.forEach((step, i) => {
        const next = m.cutoff_steps[i + 1];
        if (next) expect(next.tokens_before).toBe(step.tokens_after);
      });
      if (budget !== "24000") expect(m.cutoff_steps.at(-1)?.tokens_after).toBe(m.total_tokens);
    }
    const { manifests } = sessionDir(base);
    for (const name of readdirSync(manifests)) itemsAddUp(await validateManifest(readJson(join(manifests, name)), name));
  }, 30_000);

  // chat -p appends piped standard input to the message (ADR 0077); the dry run neither reads it
  // nor says it was left out, so its report and --show-prompt are not what `… | chat -p` sends.
  // Was: piped standard input was silently left out of the dry run.
  test("piped standard input is in the dry run, as `… | chat -p` sends it", async () => {
    const piped = "PIPED-LOG-LINE 42\n";
    const dry = await prompt(base, ["--dry-run", "--show-prompt", "review this"], { stdin: piped });
    expect(dry.code).toBe(0);

    const { root } = await copyOfBase();
    const real = await runCli(["chat", "--continue", "-p", "review this"], { cwd: root, env: chatEnv({ server }), stdin: piped });
    expect(real.code).toBe(0);
    expect(JSON.stringify(server.requests.at(-1)?.body.input)).toContain("PIPED-LOG-LINE 42");

    // Either the preview carries it as chat would, or it says on stderr that standard input is not read.
    const previewed = dry.stdout.includes("PIPED-LOG-LINE 42") || /standard input/.test(dry.stderr);
    expect({ previewed, stderr: dry.stderr }).toMatchObject({ previewed: true });
  }, 30_000);

  // Was: the dry run did not say it.
  test("in an untrusted clone the dry run says that the repository's .valarmind/config.json is ignored, as chat -p does", async () => {
    const { root } = await copyOfBase();
    writeFileSync(join(root, ".valarmind", "config.json"), JSON.stringify({ maxContextTokens: 5000 }));
    const real = await chat(["--continue", "-p", "hi"], { cwd: root, server });
    expect(real.code).toBe(0);
    expect(real.stderr).toContain("ignoring .valarmind/config.json (maxContextTokens: 5000): this folder is not trusted");

    const dry = await prompt(root, ["--dry-run", "hi"]);
    expect(dry.code).toBe(0);
    // Rightly built with the user's budget, not the clone's…
    expect(dry.stdout).toContain("/ 24,000 tokens");
    // …but the reader is not told that the repository asks for 5,000 and is not trusted.
    expect(dry.stdout + dry.stderr).toContain(".valarmind/config.json");
    expect(dry.stdout + dry.stderr).toMatch(/not trusted/);
  }, 30_000);
});

describe("--show / --diff selectors and where prompt runs", () => {
  test("selectors that name nothing (0, -0, -99, 1.5, 1e0, '', a path) and unknown options are usage errors quoting what was given", async () => {
    for (const selector of ["0", "-0", "-99", "1.5", "1e0", "", "../../etc/passwd", "0x1"]) {
      const r = await prompt(base, ["--show", selector]);
      expect({ selector, code: r.code, stdout: r.stdout }).toEqual({ selector, code: 2, stdout: "" });
      expect(r.stderr).toContain(`no manifest '${selector}' in this session (it has 2)`);
      expect(r.stderr).toContain("Use a number from 'valarmind prompt --list'");
      expect(r.stderr).not.toMatch(STACK);
      expect(r.stderr).not.toContain("root:");
    }
    const diff = await prompt(base, ["--diff", "1", "../../etc/passwd"]);
    expect(diff.code).toBe(2);
    expect(diff.stderr).toContain("no manifest '../../etc/passwd'");
    const why = await prompt(base, ["--why", "x"]);
    expect(why.code).toBe(2);
    expect(why.stderr).toContain("unknown option '--why'");
    const tokens = await prompt(base, ["--tokens", "API", "hi"]);
    expect(tokens.code).toBe(2);
    expect(tokens.stderr).toContain("--tokens must be 'local' or 'api', got \"API\"");
  }, 30_000);

  // Was: it said there was no such manifest (exit 2).
  test("`--show 2-1` of a damaged manifest says it is damaged, as `--show 2` does", async () => {
    const { root, manifests } = await copyOfBase();
    writeFileSync(join(manifests, "0002-01.json"), "{ cut mid-wri");
    const list = await prompt(root, ["--list"]);
    expect(list.stdout).toMatch(/ 2 {2}damaged, skipped {2}0002-01\.json/);
    const byNumber = await prompt(root, ["--show", "2"]);
    expect(byNumber.code).toBe(1);
    expect(byNumber.stderr).toContain("manifest 2 is damaged");

    const byTurnStep = await prompt(root, ["--show", "2-1"]);
    expect(byTurnStep.stderr).not.toContain("no manifest '2-1'");
    expect(byTurnStep.stderr).toContain("0002-01.json");
    expect(byTurnStep.stderr).toContain("damaged");
    expect(byTurnStep.code).toBe(1);
  }, 30_000);

  // Was: it silently showed the first.
  test("`--show 1-1` when two manifests are turn 1 step 1 (a rebuilt step, 0001-01-2.json) is ambiguous, naming both", async () => {
    const { root, manifests } = await copyOfBase();
    const first = readJson<Manifest>(join(manifests, "0001-01.json"));
    writeFileSync(join(manifests, "0001-01-2.json"), JSON.stringify({ ...first, budget_tokens: 7777 }, null, 2));
    const list = await prompt(root, ["--list"]);
    expect(list.stdout.match(/turn 1·1 /g)).toHaveLength(2);

    const r = await prompt(root, ["--show", "1-1"]);
    // Which of the two the user meant is not known: say so, naming both, as an ambiguous session id is.
    expect(r.stderr).toContain("0001-01.json");
    expect(r.stderr).toContain("0001-01-2.json");
    expect(r.code).toBe(2);
  }, 30_000);

  // src/cli/commands/once-option.ts: "A value option given twice is a usage error, not 'the last one wins'".
  // Was: the last value was silently taken.
  test("`--show 1 --show 2` and `--budget 5000 --budget 9000` are usage errors naming the option", async () => {
    const show = await prompt(base, ["--show", "1", "--show", "2"]);
    expect(show.stdout).not.toContain("0002-01.json");
    expect(show.stderr).toContain("--show");
    expect(show.code).toBe(2);
    const budget = await prompt(base, ["--budget", "5000", "--budget", "9000", "--json", "hi"]);
    expect(budget.stdout).not.toContain('"budget_tokens": 9000');
    expect(budget.stderr).toContain("--budget");
    expect(budget.code).toBe(2);
  }, 30_000);

  test("in a subdirectory the root's session is found; in a folder without .valarmind --show and --diff are usage errors that create nothing", async () => {
    const deep = join(base, "pkg", "deep");
    mkdirSync(deep, { recursive: true });
    const { id } = sessionDir(base);
    const list = await prompt(deep, ["--list"]);
    expect(list.code).toBe(0);
    expect(list.stdout).toContain(`session ${id} · 2 manifests in ../../.valarmind/sessions/${id}`);
    const shown = await prompt(deep, ["--show", "2-1", "--json"]);
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({ session: id, turn: 2, step: 1 });
    const dry = await prompt(deep, ["--json", "hi"]);
    expect(dry.code).toBe(0);
    expect(JSON.parse(dry.stdout)).toMatchObject({ session: id, turn: 3 });

    const empty = await makeTempDir();
    for (const args of [["--show", "1"], ["--diff", "1", "2"], ["--show", "-1", "--json"]]) {
      const r = await prompt(empty, args);
      expect({ args, code: r.code, stdout: r.stdout }).toEqual({ args, code: 2, stdout: "" });
      expect(r.stderr).toContain("no manifests to inspect");
      expect(r.stderr).toContain("'valarmind prompt --dry-run' works without one");
      expect(r.stderr).not.toMatch(STACK);
    }
    expect(existsSync(join(empty, ".valarmind"))).toBe(false);
  }, 30_000);
});

describe("foreign and hostile manifests", () => {
  // Transcripts and checkpoints from a newer valarmind are told as such; a manifest is "damaged"
  // and the hint says to delete it — a good file the user's newer valarmind still needs.
  // Was: it was called damaged, and the user was told to delete it.
  test("a manifest written by a newer valarmind (manifest_version 2) is said to be newer, never to be deleted", async () => {
    const { root, manifests } = await copyOfBase();
    const second = readJson<Record<string, unknown>>(join(manifests, "0002-01.json"));
    writeFileSync(join(manifests, "0003-01.json"), JSON.stringify({ ...second, manifest_version: 2, turn: 3 }, null, 2));
    const shown = await prompt(root, ["--show", "3"]);
    expect(shown.code).not.toBe(0);
    expect(shown.stderr).not.toMatch(STACK);
    expect(shown.stderr).toMatch(/newer valarmind/);
    expect(shown.stderr).not.toContain("delete");
    const list = await prompt(root, ["--list"]);
    expect(list.code).toBe(0);
    expect(list.stderr).not.toContain("damaged");
  }, 30_000);

  // terminalSafe keeps newlines (it is for prose); a manifest's id or detail is one table cell.
  // Was: it forged whole lines.
  test("a newline in an item's detail (a file name, a shipped manifest) stays on its row in --show and --diff", async () => {
    const { root, manifests } = await copyOfBase();
    const file = join(manifests, "0002-01.json");
    const m = readJson<Manifest>(file);
    const last = m.items.at(-1);
    if (!last) throw new Error("manifest without items");
    last.detail = "the user's message\nusage   input 1 (cached 1, 100%) FORGED";
    writeFileSync(file, JSON.stringify(m, null, 2));
    for (const args of [["--show", "2"], ["--diff", "1", "2"]]) {
      const r = await prompt(root, args);
      expect({ args, code: r.code }).toEqual({ args, code: 0 });
      // The text is still shown, inert, on its item's row: never as a line of its own.
      expect(r.stdout).toContain("FORGED");
      expect(r.stdout).not.toMatch(/^usage {3}input 1 \(cached 1, 100%\) FORGED/m);
    }
  }, 30_000);

  // makePrivateDir refuses a linked `.valarmind`, readManifest a linked manifest file; but
  // writeManifest creates its directory with makePrivateDirs (mkdirSync recursive), which follows a
  // link at `.valarmind/sessions/<id>/manifests` (or at the session directory) wherever it points.
  // Was: the next manifest was written there.
  test("a `manifests` directory that links outside the workspace: `chat --continue` writes nothing there and names the link", async () => {
    const { root, manifests } = await copyOfBase();
    const outside = realpathSync(await makeTempDir("valarmind-outside-"));
    renameSync(manifests, join(outside, "manifests"));
    symlinkSync(join(outside, "manifests"), manifests);
    const before = readdirSync(join(outside, "manifests")).sort();
    const r = await chat(["--continue", "-p", "three"], { cwd: root, server });
    expect(r.stderr).not.toMatch(STACK);
    // Refused, naming the link, or the turn ran and its manifest stayed inside the workspace; never
    // "passed" because the chat failed for some other reason.
    expect({ code: r.code, namesLink: /link/.test(r.stderr) }).toMatchObject(r.code === 0 ? { code: 0 } : { namesLink: true });
    expect(readdirSync(join(outside, "manifests")).sort()).toEqual(before);
  }, 30_000);

  // Was: it was listed and shown as this session's.
  test("a `manifests` directory that links outside the workspace is refused, not listed as this session's", async () => {
    const { root, manifests } = await copyOfBase();
    const outside = realpathSync(await makeTempDir("valarmind-outside-"));
    const foreign = readJson<Manifest>(join(manifests, "0001-01.json"));
    writeFileSync(join(outside, "0077-01.json"), JSON.stringify({ ...foreign, turn: 77, session: "elsewhere" }, null, 2));
    renameSync(manifests, join(root, "kept-aside"));
    symlinkSync(outside, manifests);
    const list = await prompt(root, ["--list"]);
    expect(list.stderr).not.toMatch(STACK);
    expect(list.stdout).not.toContain("turn 77·1");
    expect(list.stdout + list.stderr).toMatch(/link/);
    const shown = await prompt(root, ["--show", "-1"]);
    expect(shown.stdout).not.toContain("session elsewhere");
  }, 30_000);
});

describe("--budget", () => {
  test("0, negative, NaN, Infinity, units and empty are refused, exit 2, naming --budget and what to pass", async () => {
    for (const value of ["0", "-5000", "NaN", "Infinity", "8k", "16K tokens", ""]) {
      const r = await prompt(base, ["--dry-run", "--budget", value, "hi"]);
      expect({ value, code: r.code, stdout: r.stdout }).toEqual({ value, code: 2, stdout: "" });
      expect(r.stderr).toContain(`--budget must be an integer of at least 1000 tokens, got '${value}'`);
      expect(r.stderr).toContain("Pass a whole number of tokens, e.g. --budget 8000.");
    }
  }, 30_000);

  // src/cli/budget-flag.ts parseBudgetFlag: Number(value) and Number.isInteger, no upper bound.
  // Was: it was accepted and became another number (…993 → …992; 10^23 printed as 1e+23).
  test("a budget past 2^53 is out of range (exit 2), never silently another number", async () => {
    for (const value of ["9007199254740993", "100000000000000000000000"]) {
      const r = await prompt(base, ["--dry-run", "--json", "--budget", value, "hi"]);
      const shownBudget = r.code === 0 ? /"budget_tokens": ([^,]+),/.exec(r.stdout)?.[1] : undefined;
      // Refused as out of range (exit 2, naming --budget), or kept exactly as typed: never changed.
      if (r.code === 0) expect({ value, shownBudget }).toEqual({ value, shownBudget: value });
      else {
        expect(r.code).toBe(2);
        expect(r.stderr).toContain("--budget");
      }
    }
  }, 30_000);
});

describe("--tokens api", () => {
  // src/model/openai-client.ts countInputTokens returns `result.input_tokens` unchecked.
  // Was: it was shown unchecked, or left out without a word.
  test("a server's input_tokens that is no count (negative, fractional, text, missing) is an error naming what it answered", async () => {
    const answers: Array<[string, Record<string, unknown>]> = [
      ["negative", { object: "response.input_tokens", input_tokens: -5 }],
      ["fractional", { object: "response.input_tokens", input_tokens: 1.5 }],
      ["text", { object: "response.input_tokens", input_tokens: "lots" }],
      ["missing", { object: "response.input_tokens" }],
    ];
    for (const [what, answer] of answers) {
      server.enqueueInputTokens(jsonResponse(answer));
      const r = await prompt(base, ["--tokens", "api", "count me"]);
      expect(r.stderr).not.toMatch(STACK);
      expect(r.stdout).not.toMatch(/input_tokens (-5|1\.5|lots)/);
      expect({ what, code: r.code, namesField: r.stderr.includes("input_tokens") }).toEqual({ what, code: 1, namesField: true });
    }
  }, 30_000);

  test("an unreachable server is exit 1 naming the URL; an untrusted clone's baseURL is not the one asked", async () => {
    const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    const closedPort = probe.port;
    probe.stop(true);
    const down = await prompt(base, ["--tokens", "api", "hi"], { env: { OPENAI_BASE_URL: `http://127.0.0.1:${closedPort}/v1` } });
    expect(down.code).toBe(1);
    expect(down.stdout).toBe("");
    expect(down.stderr).toContain(`http://127.0.0.1:${closedPort}/v1`);
    expect(down.stderr).not.toMatch(STACK);

    const other = startFakeResponsesServer();
    try {
      const { root } = await copyOfBase();
      writeFileSync(join(root, ".valarmind", "config.json"), JSON.stringify({ baseURL: other.baseURL }));
      const counted = server.tokenCountRequests.length;
      const r = await prompt(root, ["--tokens", "api", "hi"]);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/api {5}input_tokens [\d,]+ \(local [\d,]+, [+-][\d,]+\)/);
      expect(other.tokenCountRequests).toHaveLength(0);
      expect(server.tokenCountRequests.length).toBe(counted + 1);
    } finally {
      await other.close();
    }
  }, 30_000);
});
