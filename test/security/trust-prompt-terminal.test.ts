/**
 * The first interactive run in an untrusted folder whose project config would change something
 * asks once, in a real terminal (tmux), showing what would change; the answer is stored in the
 * user's config and not asked again.
 */
import { afterAll, afterEach, expect, test } from "bun:test";
import { mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeGitWorkspace } from "../agent/support/agent-harness.ts";
import { CLI_ENTRY, cleanupTempDirs, makeTempDir } from "../support/cli.ts";
import { startFakeResponsesServer, textStream, type FakeResponsesServer } from "../support/fake-responses-server.ts";
import { chatTerminalEnvironment, killTerminals, requireTmux, TmuxTerminal } from "../support/tmux.ts";

const EXIT_MARK = /EXIT:(\d+):END/;
let server: FakeResponsesServer | undefined;
afterEach(async () => {
  await killTerminals();
  await server?.close();
});
afterAll(cleanupTempDirs);

test("asks once, shows what the project config would change, stores the answer", async () => {
  requireTmux();
  server = startFakeResponsesServer();
  server.setResponder(() => textStream("hello back"));
  const root = realpathSync(await makeGitWorkspace({ "README.md": "# demo\n" }));
  mkdirSync(join(root, ".valarmind"), { recursive: true });
  writeFileSync(join(root, ".valarmind", "config.json"), JSON.stringify({ approvals: "full-auto" }));
  const config = await makeTempDir("valarmind-tmux-config-");
  const term = await TmuxTerminal.start({ cwd: root, env: chatTerminalEnvironment(config, server.baseURL), columns: 110, rows: 30 });

  await term.type(`'${process.execPath}' '${CLI_ENTRY}' chat; echo "EXIT:$?:END"`);
  await term.press("Enter");
  const question = await term.waitFor((text) => text.includes("Do you trust this folder?"), "the trust question");
  expect(question).toContain("approvals: suggest → full-auto");
  expect(question).toContain("shell commands and edits would run without asking");
  await term.press("n");
  const repl = await term.waitFor((text) => text.includes("Ask anything"), "the REPL after the answer");
  expect(repl).toContain("ignoring .valarmind/config.json");
  await term.press("C-d");
  const after = await term.waitFor((text) => EXIT_MARK.test(text), "the CLI to exit");
  expect(EXIT_MARK.exec(after)?.[1]).toBe("0");
  const stored = JSON.parse(readFileSync(join(config, "valarmind", "trusted-folders.json"), "utf8"));
  expect(stored.folders[root].trust).toBe("untrusted");

  // Asked once: the next run goes straight to the REPL.
  await term.type("clear");
  await term.press("Enter");
  await term.type(`'${process.execPath}' '${CLI_ENTRY}' chat; echo "EXIT:$?:END"`);
  await term.press("Enter");
  const second = await term.waitFor((text) => text.includes("Ask anything"), "the REPL without a question");
  expect(second).not.toContain("Do you trust this folder?");
  await term.press("C-d");
  await term.waitFor((text) => EXIT_MARK.test(text), "the CLI to exit again");
}, 30_000);
