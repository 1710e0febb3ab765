/**
 * Issue 9 through the real CLI (`valarmind chat -p --yes --json` against the fake server): a
 * full-auto run's shell command is sandboxed (no write outside the workspace, no secrets); with
 * bubblewrap unavailable the user is told once and commands are refused headless, unless
 * `--sandbox off`; SIGTERM ends a headless run like Ctrl+C, with exit code 143.
 */
import { afterAll, afterEach, beforeEach, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { chat, spawnChat } from "../agent/support/cli-chat.ts";
import { cleanupTempDirs, makeTempDir, readUntil } from "../support/cli.ts";
import { startFakeResponsesServer, textStream, toolCallStream, toolOutputsThisTurn, type FakeResponsesServer } from "../support/fake-responses-server.ts";

const GITHUB_TOKEN = "ghp_CliSandbox1Token2Never3Reaches4Model5";

let server: FakeResponsesServer;
beforeEach(() => {
  server = startFakeResponsesServer();
});
afterEach(async () => {
  await server.close();
});
afterAll(cleanupTempDirs);

async function workspace(): Promise<{ repo: string; outside: string; config: string }> {
  const repo = await makeTempDir("valarmind-sandbox-cli-");
  const outside = await makeTempDir("valarmind-sandbox-outside-");
  const config = await makeTempDir("valarmind-sandbox-config-");
  mkdirSync(join(repo, ".git"));
  return { repo, outside, config };
}

function runsOnce(command: string): void {
  server.setResponder((body) =>
    toolOutputsThisTurn(body).length > 0 ? textStream("done") : toolCallStream([{ name: "run_shell", arguments: { command } }]),
  );
}

function notices(stdout: string, code: string): unknown[] {
  return stdout
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as { type?: string; code?: string })
    .filter((event) => event.type === "notice" && event.code === code);
}

test("full-auto: the command runs sandboxed and sees no secrets", async () => {
  const { repo, outside, config } = await workspace();
  runsOnce(`echo ok > inside.txt; echo pwned > ${outside}/pwned.txt; echo pwned > .git/pwned; env`);
  const r = await chat(["-p", "go", "--yes", "--json"], { cwd: repo, server, env: { XDG_CONFIG_HOME: config, GITHUB_TOKEN } });
  expect(r.code).toBe(0);
  expect(existsSync(join(repo, "inside.txt"))).toBe(true);
  expect(existsSync(join(outside, "pwned.txt"))).toBe(false);
  expect(existsSync(join(repo, ".git", "pwned"))).toBe(false);
  for (const request of server.requests) expect(request.raw).not.toContain(GITHUB_TOKEN);
  expect(notices(r.stdout, "sandbox_unavailable")).toEqual([]);
});

test("without bubblewrap: one notice, the command is refused even with --yes; --sandbox off runs it", async () => {
  const { repo, config } = await workspace();
  const env = { XDG_CONFIG_HOME: config, VALARMIND_TEST_BWRAP: join(repo, "no-such-bwrap") };
  runsOnce("echo ran > ran.txt");
  const refused = await chat(["-p", "go", "--yes", "--json"], { cwd: repo, server, env });
  expect(refused.code).toBe(0);
  expect(notices(refused.stdout, "sandbox_unavailable").length).toBe(1);
  expect(refused.stdout).toContain("apt-get install bubblewrap");
  expect(existsSync(join(repo, "ran.txt"))).toBe(false);
  const output = toolOutputsThisTurn(server.requests[1]?.body ?? {}).map((o) => o.output ?? "").join("\n");
  expect(output).toContain("Refused");

  const off = await chat(["-p", "go", "--yes", "--json", "--sandbox", "off"], { cwd: repo, server, env });
  expect(off.code).toBe(0);
  expect(notices(off.stdout, "sandbox_unavailable")).toEqual([]);
  expect(existsSync(join(repo, "ran.txt"))).toBe(true);
});

test("SIGTERM ends a headless turn like Ctrl+C, with exit code 143", async () => {
  const { repo, config } = await workspace();
  runsOnce("sleep 30");
  const child = spawnChat(["-p", "go", "--yes", "--json"], { cwd: repo, server, env: { XDG_CONFIG_HOME: config } });
  const stdout = child.stdout;
  const seen = await readUntil(stdout, (text) => text.includes('"tool_call_start"'));
  child.kill("SIGTERM");
  const rest = await readUntil(stdout, (text) => text.includes('"turn_end"'));
  expect(await child.exited).toBe(143);
  expect(`${seen}${rest}`).toContain('"stopReason":"aborted"');
});

/** Processes on the machine now. */
function processCount(): number {
  return readdirSync("/proc").filter((entry) => /^\d+$/.test(entry)).length;
}

test("a fork bomb the model runs stays within shellProcessLimit, and the turn ends at the timeout", async () => {
  const { repo, config } = await workspace();
  mkdirSync(join(config, "valarmind"), { recursive: true });
  writeFileSync(join(config, "valarmind", "config.json"), JSON.stringify({ shellProcessLimit: 150, shellTimeoutMs: 3000 }));
  // A bomb with a depth bound (about 4,000 processes unbounded), so a regression cannot take the machine down.
  runsOnce('b(){ if [ ${#1} -lt 10 ]; then b "x$1" & b "x$1" & fi; sleep 6; }; b ""');
  const before = processCount();
  let peak = before;
  const sampler = setInterval(() => {
    peak = Math.max(peak, processCount());
  }, 20);
  let r: Awaited<ReturnType<typeof chat>>;
  try {
    r = await chat(["-p", "go", "--yes", "--json"], { cwd: repo, server, env: { XDG_CONFIG_HOME: config } });
  } finally {
    clearInterval(sampler);
  }
  expect(r.code).toBe(0);
  // The sandbox's 150, plus valarmind, bwrap and the test's own processes.
  expect(peak - before).toBeLessThan(200);
  const output = toolOutputsThisTurn(server.requests[1]?.body ?? {}).map((o) => o.output ?? "").join("\n");
  expect(output).toContain("timed out");
  if (process.getuid?.() === 0) expect(output).toContain("reached the sandbox's limit of 150 processes");
  expect(processCount() - before).toBeLessThan(20);
}, 30_000);
