/**
 * The real binary in a real terminal: `bun src/cli/main.ts chat` inside tmux (100x30, NO_COLOR),
 * in a temp git workspace, against the fake Responses server started here. Ask, watch the
 * answer stream in, ask for an edit, approve it with `y`, leave with Ctrl+D, and check the
 * terminal is left as it was found: exit status 0, canonical mode and echo on, cursor visible.
 */
import { afterAll, afterEach, beforeEach, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { makeGitWorkspace } from "../agent/support/agent-harness.ts";
import { CLI_ENTRY, cleanupTempDirs, makeTempDir } from "../support/cli.ts";
import {
  lastInputItem,
  lastUserText,
  startFakeResponsesServer,
  textStream,
  toolCallStream,
  toolOutputsThisTurn,
  type FakeResponsesServer,
} from "../support/fake-responses-server.ts";
import { chatTerminalEnvironment, killTerminals, requireTmux, TmuxTerminal, type Termios } from "../support/tmux.ts";

const SUM = "export const sum = (a: number, b: number) => a - b;\n";
const FIXED = "export const sum = (a: number, b: number) => a + b;\n";
const ANSWER = "The sum function subtracts b from a, which is the bug.";
const DONE = "Fixed: sum now adds its arguments.";
/** The shell prints this after the CLI exits; the typed command line itself cannot match it. */
const EXIT_MARK = /EXIT:(\d+):END/;

let server: FakeResponsesServer;
beforeEach(() => {
  server = startFakeResponsesServer();
  server.setResponder((body) => {
    if (lastInputItem(body)?.type === "function_call_output") return textStream(DONE);
    if (lastUserText(body).includes("fix")) {
      return toolCallStream([{ name: "edit_file", arguments: { path: "src/sum.ts", old_string: "a - b", new_string: "a + b" } }]);
    }
    return textStream(ANSWER);
  });
});
afterEach(async () => {
  await killTerminals();
  await server.close();
});
afterAll(cleanupTempDirs);

async function chatEnvironment(): Promise<Record<string, string>> {
  return chatTerminalEnvironment(await makeTempDir("valarmind-tmux-config-"), server.baseURL);
}

const on = (modes: Termios, flag: string) => modes.get(flag) === true;

test("chat in tmux: ask, see the streamed answer, approve an edit, exit cleanly", async () => {
  requireTmux();
  const root = await makeGitWorkspace({ "src/sum.ts": SUM });
  const term = await TmuxTerminal.start({ cwd: root, env: await chatEnvironment(), columns: 100, rows: 30 });
  const before = await term.termios();
  expect(on(before, "icanon") && on(before, "echo")).toBe(true);

  await term.type(`'${process.execPath}' '${CLI_ENTRY}' chat; echo "EXIT:$?:END"`);
  await term.press("Enter");
  await term.waitFor((text) => text.includes("Ask anything"), "the REPL's prompt");
  // Typing before ink switched the tty to raw mode would echo the keys through the line discipline.
  await term.waitFor(async () => !on(await term.termios(), "icanon"), "raw mode on the pane's tty");
  // ink hides the cursor while it draws: the check after exit below is not vacuous.
  expect(await term.format("#{cursor_flag}")).toBe("0");

  await term.type("what does sum do?");
  await term.press("Enter");
  await term.waitFor((text) => text.includes(ANSWER), "the streamed answer");
  expect(lastUserText(server.requests[0]?.body ?? {})).toBe("what does sum do?");

  await term.type("fix it");
  await term.press("Enter");
  const approval = await term.waitFor((text) => text.includes("1. Allow once (y)"), "the approval prompt");
  expect(approval).toContain("Allow edit_file?");
  expect(approval).toContain("-export const sum = (a: number, b: number) => a - b;");
  expect(approval).toContain("+export const sum = (a: number, b: number) => a + b;");
  expect(readFileSync(join(root, "src/sum.ts"), "utf8")).toBe(SUM);

  await term.press("y");
  await term.waitFor((text) => text.includes(DONE), "the final answer");
  expect(readFileSync(join(root, "src/sum.ts"), "utf8")).toBe(FIXED);
  expect(toolOutputsThisTurn(server.requests.at(-1)?.body ?? {})[0]?.output).toContain("Edited src/sum.ts");

  await term.press("C-d");
  const after = await term.waitFor((text) => EXIT_MARK.test(text), "the CLI to exit");
  expect(EXIT_MARK.exec(after)?.[1]).toBe("0");
  expect(after).not.toMatch(/^\s+at .+:\d+/m);

  // Modes restored: seen from outside the pane, and by `stty -a` run in it.
  const restored = await term.termios();
  expect([on(restored, "icanon"), on(restored, "echo"), on(restored, "isig")]).toEqual([true, true, true]);
  expect(await term.format("#{cursor_flag}")).toBe("1");
  await term.type("stty -a; echo STTY-DONE");
  await term.press("Enter");
  const stty = await term.waitFor((text) => /^STTY-DONE$/m.test(text), "stty -a in the pane");
  const report = stty.slice(stty.lastIndexOf("speed "));
  expect(report).toMatch(/(^|\s)icanon(\s|;|$)/m);
  expect(report).toMatch(/(^|\s)echo(\s|;|$)/m);
}, 30_000);
