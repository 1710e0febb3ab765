/**
 * Several `chat --continue -p` at once on one session (issue 10, part 1): every process exits 0
 * without a stack trace, every message is in some transcript, and a later `--continue` works.
 */
import { afterAll, afterEach, beforeEach, expect, test } from "bun:test";
import { cleanupTempDirs } from "../support/cli.ts";
import { lastUserText, startFakeResponsesServer, textStream, type FakeResponsesServer } from "../support/fake-responses-server.ts";
import { makeGitWorkspace } from "../agent/support/agent-harness.ts";
import { chat } from "../agent/support/cli-chat.ts";
import { allUserMessages } from "./support/transcripts.ts";

let server: FakeResponsesServer;
let root: string;
beforeEach(async () => {
  server = startFakeResponsesServer();
  server.setResponder((body) => textStream(`echo: ${lastUserText(body)}`));
  root = await makeGitWorkspace({ "README.md": "# demo\n" });
});
afterEach(async () => {
  await server.close();
});
afterAll(cleanupTempDirs);

test("10 concurrent --continue on one session: all exit 0, no stack trace, no message lost, --continue still works", async () => {
  expect((await chat(["-p", "first"], { cwd: root, server })).code).toBe(0);
  const messages = Array.from({ length: 10 }, (_, i) => `concurrent message ${i}`);
  const results = await Promise.all(messages.map((m) => chat(["--continue", "-p", m], { cwd: root, server })));
  for (const [i, r] of results.entries()) {
    expect({ i, code: r.code, stderr: r.stderr }).toMatchObject({ i, code: 0 });
    expect(r.stderr).not.toMatch(/^\s+at /m);
    expect(r.stdout).toBe(`echo: ${messages[i]}\n`);
  }
  const stored = allUserMessages(root);
  for (const m of messages) expect(stored).toContain(m);

  const after = await chat(["--continue", "-p", "after the storm"], { cwd: root, server });
  expect(after.stderr).not.toMatch(/^\s+at /m);
  expect(after.code).toBe(0);
  expect(after.stdout).toBe("echo: after the storm\n");
}, 60_000);
