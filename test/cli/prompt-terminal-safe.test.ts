/**
 * `valarmind prompt` reports cannot act on the terminal: a manifest's details and ids, and a
 * request's contents, come from the repository and the model (file names, instruction files,
 * answers). The text reports show every control inert; the JSON forms escape what a terminal
 * would act on (DEL, C1, bidi controls) and still parse back to the exact strings.
 */
import { afterAll, afterEach, beforeEach, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanupTempDirs, runCli } from "../support/cli.ts";
import { startFakeResponsesServer, textStream, type FakeResponsesServer } from "../support/fake-responses-server.ts";
import { makeGitWorkspace } from "../agent/support/agent-harness.ts";
import { chat } from "../agent/support/cli-chat.ts";

let server: FakeResponsesServer;
beforeEach(() => {
  server = startFakeResponsesServer();
});
afterEach(async () => {
  await server.close();
});
afterAll(cleanupTempDirs);

const HOSTILE = "evil\u001b]52;c;ZXZpbA==\u0007name\u001b[2J\u202e\u009b31m";
/** What a terminal would act on: BEL, ESC, C1 CSI, a bidi override. */
const ACTIVE = /[\u0007\u001b\u009b\u202e]/;
/** What the JSON forms must not carry raw (JSON already escapes C0). */
const RAW_IN_JSON = /[\u009b\u202e]/;

function manifestFile(root: string): string {
  const sessions = join(root, ".valarmind", "sessions");
  const dir = readdirSync(sessions, { withFileTypes: true }).find((e) => e.isDirectory());
  if (!dir) throw new Error("no session directory");
  const manifests = join(sessions, dir.name, "manifests");
  const name = readdirSync(manifests).find((f) => f.endsWith(".json"));
  if (!name) throw new Error("no manifest");
  return join(manifests, name);
}

describe("valarmind prompt cannot act on the terminal", () => {
  test("a manifest whose details hold control sequences: --show, --list and --diff show them inert; --json escapes them and parses back exact", async () => {
    const root = await makeGitWorkspace();
    server.enqueue(textStream("hi"));
    const first = await chat(["-p", "hello"], { cwd: root, server });
    expect(first.code).toBe(0);
    const file = manifestFile(root);
    const manifest = JSON.parse(readFileSync(file, "utf8")) as { items: Array<{ detail?: string }> };
    const item = manifest.items.at(-1);
    if (!item) throw new Error("manifest without items");
    item.detail = HOSTILE;
    writeFileSync(file, JSON.stringify(manifest));

    for (const args of [["prompt", "--show", "-1", "--all"], ["prompt", "--list"], ["prompt", "--diff", "-1", "-1"]]) {
      const r = await runCli(args, { cwd: root });
      expect({ args, code: r.code }).toEqual({ args, code: 0 });
      expect(r.stdout + r.stderr).not.toMatch(ACTIVE);
    }
    const shown = await runCli(["prompt", "--show", "-1", "--all"], { cwd: root });
    expect(shown.stdout).toContain("evilname<U+202E><U+009B>31m");

    const json = await runCli(["prompt", "--show", "-1", "--json"], { cwd: root });
    expect(json.code).toBe(0);
    expect(json.stdout).not.toMatch(RAW_IN_JSON);
    expect((JSON.parse(json.stdout) as typeof manifest).items.at(-1)?.detail).toBe(HOSTILE);
  }, 30_000);

  test("--dry-run --show-prompt: a message holding bidi and C1 controls is escaped in the request JSON, exact once parsed", async () => {
    // (An instruction file with bidi controls is refused since: text the model reads and the user does not see.)
    const root = await makeGitWorkspace({ "VALARMIND.md": `# rules\n${HOSTILE}\n` });
    const r = await runCli(["prompt", "--dry-run", "--show-prompt", `hello ${HOSTILE}`], { cwd: root });
    expect(r.code).toBe(0);
    expect(r.stdout).not.toMatch(RAW_IN_JSON);
    expect(r.stdout).toContain("\\u202e");
    const request = JSON.parse(r.stdout) as { instructions: string; input: unknown };
    expect(JSON.stringify(request.input)).toContain(JSON.stringify(HOSTILE).slice(1, -1));
    expect(request.instructions).not.toContain("# rules");
  }, 30_000);
});
