/**
 * Issue 10: the bad-input catalogue. Every case in `support/bad-input-cases.ts` runs the real CLI
 * and must exit with the code README documents, name the file, field, flag or URL on stderr and
 * say what to do, print no stack trace, and lose nothing the user wrote: every file the case
 * wrote is byte-identical afterwards (or, where documented, its moved-aside copy is), and a chat
 * message is in a transcript. `docs/bad-input.md` must list exactly these cases
 * (UPDATE_BAD_INPUT_DOC=1 rewrites its table).
 */
import { afterAll, afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { BUN_FLAGS, CLI_ENTRY, cleanupTempDirs, makeTempDir, runCli, type CliResult } from "../support/cli.ts";
import { lastUserText, startFakeResponsesServer, textStream, type FakeResponsesServer } from "../support/fake-responses-server.ts";
import { makeGitWorkspace } from "../agent/support/agent-harness.ts";

import { chatEnv } from "../agent/support/cli-chat.ts";
import { workspacePaths } from "../../src/config/paths.ts";
import { listSessions, readSession } from "../../src/session/transcript.ts";
import { CASES, HINT, renderCatalogue, type BadInputCase, type CaseContext } from "./support/bad-input-cases.ts";

const STACK = /^\s+at .+:\d+/m;
const DOC = resolve(import.meta.dir, "../../docs/bad-input.md");

let server: FakeResponsesServer;
beforeEach(() => {
  server = startFakeResponsesServer();
});
afterEach(async () => {
  await server.close();
});
afterAll(cleanupTempDirs);

interface Harness extends CaseContext {
  written: Map<string, Uint8Array>;
  messages: string[];
}

async function nobody(args: readonly string[], cwd: string, config: string): Promise<CliResult> {
  const child = Bun.spawn(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", process.execPath, ...BUN_FLAGS, CLI_ENTRY, ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? "", HOME: config, XDG_CONFIG_HOME: config, VALARMIND_CACHE_DIR: config, NO_COLOR: "1" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { code, stdout, stderr };
}

async function harness(): Promise<Harness> {
  const root = await makeGitWorkspace({ "README.md": "# demo\n" });
  mkdirSync(join(root, ".valarmind/memory"), { recursive: true });
  const config = realpathSync(await makeTempDir("valarmind-config-"));
  const written = new Map<string, Uint8Array>();
  const messages: string[] = [];
  const env = (extra: Record<string, string | undefined> = {}) => ({
    ...chatEnv({ server }),
    VALARMIND_SANDBOX: undefined,
    VALARMIND_SESSION_WAIT_MS: undefined,
    XDG_CONFIG_HOME: config,
    ...extra,
  });
  const t: Harness = {
    root,
    config,
    server,
    written,
    messages,
    write(path, content) {
      const file = path.startsWith("/") ? path : join(root, path);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, content);
      written.set(file, typeof content === "string" ? new TextEncoder().encode(content) : content);
      return file;
    },
    cli(args, extra = {}, stdin) {
      if (extra.AS_NOBODY) return nobody(args, root, config);
      return runCli(args, { cwd: root, env: env(extra), ...(stdin !== undefined ? { stdin } : {}) });
    },
    chat(text, extra = [], envExtra = {}) {
      messages.push(text);
      return t.cli(["chat", ...extra, "-p", text], envExtra);
    },
    async twoTurns() {
      server.setResponder((body) => textStream(`echo: ${lastUserText(body)}`));
      for (const args of [["chat", "-p", "one"], ["chat", "--continue", "-p", "two"]]) {
        const r = await t.cli(args);
        if (r.code !== 0) throw new Error(`setup turn failed: ${r.stderr}`);
      }
      const ref = listSessions(workspacePaths(root))[0];
      if (!ref) throw new Error("no session after two turns");
      return ref.file;
    },
    async outside() {
      return realpathSync(await makeTempDir("valarmind-outside-"));
    },
  };
  return t;
}

/** Every written file byte-identical, or its moved-aside sibling is. */
function expectKept(c: BadInputCase, t: Harness): void {
  for (const [file, bytes] of t.written) {
    if (existsSync(file) && !statSync(file).isDirectory() && Buffer.from(readFileSync(file)).equals(Buffer.from(bytes))) continue;
    const aside = c.movedAsideAs === undefined ? [] : readdirSync(dirname(file)).filter((n) => n.startsWith(`${basename(file)}${c.movedAsideAs}`));
    const copy = aside.map((n) => join(dirname(file), n)).find((p) => Buffer.from(readFileSync(p)).equals(Buffer.from(bytes)));
    expect({ file, kept: copy !== undefined || undefined }).toEqual({ file, kept: true });
  }
}

/** Each chat message is a user record in some transcript of the workspace. */
function expectMessagesKept(t: Harness): void {
  if (t.messages.length === 0) return;
  const texts = listSessions(workspacePaths(t.root)).flatMap((ref) =>
    readSession(ref.file).records.flatMap((r) => (r.kind === "user" ? [r.text] : [])),
  );
  for (const message of t.messages) expect(texts).toContain(message);
}

describe("the bad-input catalogue", () => {
  test("has at least 45 cases, each named once", () => {
    expect(CASES.length).toBeGreaterThanOrEqual(45);
    expect(new Set(CASES.map((c) => c.name)).size).toBe(CASES.length);
  });

  test("docs/bad-input.md lists exactly these cases", () => {
    const doc = readFileSync(DOC, "utf8");
    const start = "<!-- catalogue:start -->\n";
    const end = "\n<!-- catalogue:end -->";
    const table = renderCatalogue();
    const before = doc.slice(0, doc.indexOf(start) + start.length);
    const after = doc.slice(doc.indexOf(end));
    if (process.env.UPDATE_BAD_INPUT_DOC === "1") writeFileSync(DOC, `${before}${table}${after}`);
    expect(doc.slice(before.length, doc.indexOf(end))).toBe(table);
  });

  for (const c of CASES) {
    const why = c.skip?.();
    test.skipIf(why !== undefined)(`${c.area}: ${c.name} — exit ${c.code}`, async () => {
      const t = await harness();
      const r = await c.run(t);
      const seen = { code: r.code, stderr: r.stderr };
      expect(seen).toEqual({ code: c.code, stderr: expect.any(String) });
      expect(r.stderr).not.toMatch(STACK);
      expect(r.stderr).not.toContain("unexpected error");
      if (c.names) {
        expect(r.stderr).toContain(c.names(t));
        expect(r.stderr).toMatch(c.hint ?? HINT);
      }
      expectKept(c, t);
      expectMessagesKept(t);
      await c.after?.(t, r);
    });
  }
});
