/**
 * Issue 9: whatever a command prints, valarmind answers with a bounded result. Real processes in
 * the real bubblewrap sandbox, through the registry and through a whole agent turn. Memory is
 * not asserted here (bench/shell-output.bench.ts measures it); these prove the behaviour: 1 GiB
 * finishes with head, tail and exact counts, the full output goes to a private, capped file the
 * result names, one 5 MiB line comes back cut, and the transcript's raw result stays small.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { cleanupTempDirs } from "../support/cli.ts";
import { textStream, toolCallStream, startFakeResponsesServer } from "../support/fake-responses-server.ts";
import { makeGitWorkspace, openAgent, recordsOf, runTurn } from "../agent/support/agent-harness.ts";
import { call, makeWorkspace, registryFor, removeWorkspaces, TEST_SETTINGS } from "../tools/temp-workspace.ts";

// The developer's login profile (pyenv's rehash, say, complaining about the sandbox's read-only
// home) must not add stderr lines to exact counts, so commands get an empty HOME.
const realHome = process.env.HOME;
beforeAll(() => {
  process.env.HOME = makeWorkspace();
});
afterAll(() => {
  process.env.HOME = realHome;
  removeWorkspaces();
  return cleanupTempDirs();
});

/** Around the first occurrence of `marker`, so a failing match prints a few hundred bytes, not 256 KiB. */
function around(text: string, marker: string, before = 40, after = 200): string {
  const at = text.indexOf(marker);
  return at === -1 ? `(no ${JSON.stringify(marker)} in ${text.length} chars; ends: ${text.slice(-400)})` : text.slice(Math.max(0, at - before), at + after);
}

const GIB = 1024 * 1024 * 1024;
const SPOOL_CAP = 64 * 1024 * 1024;
/** The transcript's raw result of one call: two streams of 256 KiB plus the words around them. */
const RAW_BOUND = 600 * 1024;

function sandboxedWithSession(root: string) {
  const outputDir = join(root, ".valarmind", "sessions", "s1", "outputs");
  const registry = registryFor(root, { outputDir, settings: { ...TEST_SETTINGS, shellTimeoutMs: 60_000, sandbox: "workspace-write" } });
  return { registry, outputDir };
}

/** The workspace-relative spool path the result names. */
function spoolPathIn(forModel: string): string {
  const match = /full output \(stdout and stderr as they arrived\): (\S+) /.exec(forModel);
  if (!match?.[1]) throw new Error(`no spool path in:\n${forModel.slice(-600)}`);
  return match[1];
}

test("a command printing 1 GiB finishes with head, tail, exact counts and a capped spool file", async () => {
  const root = makeWorkspace();
  const { registry } = sandboxedWithSession(root);
  const outcome = await call(registry, "run_shell", { command: "yes | head -c 1G" });
  expect(outcome.isError).toBe(false);
  const text = outcome.forModel;
  expect(text.slice(0, 100)).toBe(`$ yes | head -c 1G\nexit code 0\nstdout (${GIB} bytes, ${GIB / 2} lines; first and last shown):\ny\ny\ny\ny\ny\ny\ny\ny\ny\ny\ny\ny`.slice(0, 100));
  // The tool's own result (the transcript's raw): head and tail of 128 KiB, 65,536 lines apiece,
  // the rest counted in the gap. What the model sees is that, cut again to toolOutputTokens.
  expect(around(outcome.raw, "[… ", 2, 60)).toStartWith(`y\n[… ${GIB - 2 * 131072} bytes (${GIB / 2 - 2 * 65536} lines) not shown …]\ny\ny\n`);
  expect(around(text, "full output", 10, 400)).toEndWith(
    `y\ny\nfull output (stdout and stderr as they arrived): .valarmind/sessions/s1/outputs/call_${text.split("outputs/call_")[1]?.split(".log")[0]}.log (its first ${SPOOL_CAP} bytes; ${GIB - SPOOL_CAP} more bytes were counted, not kept); read it with grep, or sed -n / tail through run_shell`,
  );
  expect(Buffer.byteLength(outcome.raw)).toBeLessThan(RAW_BOUND);

  const rel = spoolPathIn(outcome.raw);
  expect(rel).toBe(".valarmind/sessions/s1/outputs/call_" + rel.split("call_")[1]);
  const spool = join(root, rel);
  expect(statSync(spool).size).toBe(SPOOL_CAP);
  expect(statSync(spool).mode & 0o777).toBe(0o600);
  expect(statSync(dirname(spool)).mode & 0o777).toBe(0o700);
  const first = readFileSync(spool).subarray(0, 8).toString("utf8");
  expect(first).toBe("y\ny\ny\ny\n");
}, 60_000);

test("one 5 MiB line comes back cut to its two ends, and the model is told where the rest is", async () => {
  const root = makeWorkspace();
  const { registry } = sandboxedWithSession(root);
  const outcome = await call(registry, "run_shell", { command: "head -c 5M /dev/zero | tr '\\0' a; echo; echo done", timeout_ms: 20_000 });
  expect(outcome.isError).toBe(false);
  const total = 5 * 1024 * 1024 + "\ndone\n".length;
  const half = "a".repeat(500);
  expect(outcome.forModel).toBe(
    [
      "$ head -c 5M /dev/zero | tr '\\0' a; echo; echo done",
      "exit code 0",
      `stdout (${total} bytes, 2 lines; first and last shown):`,
      half,
      `[… ${total - 1000 - "\ndone\n".length} bytes (0 lines) not shown …]`,
      half,
      "done",
      // A spool over read_file's 5 MiB cap is pointed at through run_shell.
      `full output (stdout and stderr as they arrived): ${spoolPathIn(outcome.forModel)} (${total} bytes); read it with grep, or sed -n / tail through run_shell`,
    ].join("\n"),
  );
  expect(Buffer.byteLength(outcome.raw)).toBeLessThan(4096);
});

test("a spool within read_file's cap can be read back with read_file (reads of .valarmind/ are allowed)", async () => {
  const root = makeWorkspace();
  const { registry } = sandboxedWithSession(root);
  const outcome = await call(registry, "run_shell", { command: "seq 1 200000" });
  expect(outcome.forModel).toContain("read it with read_file with a line range, or grep");
  const rel = spoolPathIn(outcome.forModel);
  const read = await call(registry, "read_file", { path: rel, start_line: 100000, end_line: 100001 });
  expect(read.isError).toBe(false);
  expect(read.forModel).toContain("100000\t100000\n100001\t100001");
});

test("through a whole turn, the transcript's raw result of a 256 MiB output stays bounded and names the spool", async () => {
  const server = startFakeResponsesServer();
  try {
    const root = await makeGitWorkspace();
    server.enqueue(
      toolCallStream([{ name: "run_shell", arguments: { command: "yes | head -c 256M" }, callId: "call_big" }]),
      textStream("It printed y."),
    );
    const { session } = await openAgent(root, server, { settings: { approvals: "full-auto", shellTimeoutMs: 60_000 } });
    const turn = await runTurn(session, "print a lot");
    expect(turn.stopReason).toBe("completed");
    const [record] = recordsOf(session, "tool_call");
    const raw = record?.raw ?? record?.output ?? "";
    expect(Buffer.byteLength(raw)).toBeLessThan(RAW_BOUND);
    expect(raw).toContain(`stdout (${256 * 1024 * 1024} bytes, ${128 * 1024 * 1024} lines; first and last shown)`);
    const rel = `.valarmind/sessions/${session.sessionId}/outputs/call_big.log`;
    expect(raw).toContain(rel);
    expect(statSync(join(root, rel)).size).toBe(SPOOL_CAP);
  } finally {
    await server.close();
  }
}, 60_000);
