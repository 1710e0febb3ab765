/**
 * Resizing the REPL in its less common states: the real binary (bin/valarmind chat) in tmux
 * (NO_COLOR), in a temp git workspace, against the fake Responses server — as repl-faults.test.ts,
 * whose harness pieces are copied here. ADR 0084: once resizes settle (200 ms), the REPL clears the
 * screen and scrollback and prints the transcript again at the new width.
 *
 *   1. an approval prompt is open;          4. an answer is streaming (paused mid-way);
 *   2. a multi-line message is being typed; 5. two resizes, each one settling and redrawing;
 *   3. the /resume session picker is open;  6. the height shrinks under an answer taller than it.
 *
 * What must hold: the open prompt (or the typed text) is there once after the redraw and still
 * works; the transcript is in the scrollback once; one prompt line and one status line.
 * A redraw is waited for, not slept for: the first one clears the shell's command line from the
 * scrollback, a later one lays the long user message out again at the new width.
 * Skipped when tmux is not installed. Every tmux server started here is killed after each test.
 */
import { afterAll, afterEach, beforeEach, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { makeGitWorkspace } from "../agent/support/agent-harness.ts";
import { cleanupTempDirs, makeTempDir, runCli } from "../support/cli.ts";
import {
  conversationMessages,
  gatedAfter,
  lastInputItem,
  lastUserText,
  startFakeResponsesServer,
  textStream,
  toolCallStream,
  type FakeResponsesServer,
} from "../support/fake-responses-server.ts";
import { chatTerminalEnvironment, killTerminals, TmuxTerminal, type Termios } from "../support/tmux.ts";

const BIN = resolve(import.meta.dir, "../../bin/valarmind");
const EXIT_MARK = /EXIT:(\d+):END/;
/** The typed command line: in the scrollback until the first redraw clears it. */
const COMMAND_LINE = `chat ; echo "EXIT`;
const STACK = /^\s+at .+:\d+/m;
/** 73 characters: one line at 100 columns, wrapped by ink at 60. */
const MESSAGE = "please explain the readme and tell me what each of its sections is for";

const HAS_TMUX = Bun.which("tmux") !== null;
const it = HAS_TMUX ? test : test.skip;

let server: FakeResponsesServer;
const started = new Set<number>();

beforeEach(() => {
  server = startFakeResponsesServer();
});
afterEach(async () => {
  await killTerminals();
  for (const pid of started) if (alive(pid)) process.kill(pid, "SIGKILL");
  started.clear();
  await server.close();
});
afterAll(cleanupTempDirs);

// ---------------------------------------------------------------- harness (from repl-faults.test.ts)

async function chatEnvironment(): Promise<Record<string, string>> {
  const env = chatTerminalEnvironment(await makeTempDir("valarmind-resize-config-"), server.baseURL);
  return { ...env, PATH: `${dirname(process.execPath)}:${env.PATH ?? "/usr/bin:/bin"}` };
}

function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined;
  }
}

function childrenOf(pid: number): number[] {
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((child) => Number(statFields(child)?.[1]) === pid);
}

function alive(pid: number): boolean {
  const state = statFields(pid)?.[0];
  return state !== undefined && state !== "Z";
}

async function tmuxIn(term: TmuxTerminal, ...args: string[]): Promise<string> {
  const child = Bun.spawn(["tmux", "-L", term.socket, ...args], { stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  if (code !== 0) throw new Error(`tmux ${args.join(" ")} exited ${code}: ${stderr.trim()}`);
  return stdout;
}

const on = (modes: Termios, flag: string) => modes.get(flag) === true;

async function startChat(root: string, size = { columns: 100, rows: 30 }): Promise<{ term: TmuxTerminal; pid: number }> {
  const term = await TmuxTerminal.start({ cwd: root, env: await chatEnvironment(), ...size });
  const shell = Number(await term.format("#{pane_pid}"));
  await term.type(`'${BIN}' ${COMMAND_LINE}:$?:END"`);
  await term.press("Enter");
  await term.waitFor((text) => text.includes("Ask anything"), "the REPL's prompt", 15_000);
  await term.waitFor(async () => !on(await term.termios(), "icanon"), "raw mode on the pane's tty");
  const pid = childrenOf(shell)[0];
  if (pid === undefined) throw new Error("no valarmind process under the pane's shell");
  started.add(pid);
  return { term, pid };
}

/** Ctrl+D on an empty prompt: exit 0, no stack trace, terminal modes restored. */
async function leaveCleanly(term: TmuxTerminal, pid: number): Promise<void> {
  await term.press("C-u");
  await term.press("C-d");
  const after = await term.waitFor((t) => EXIT_MARK.test(t) && !alive(pid), "the REPL to exit on Ctrl+D", 5_000);
  expect(EXIT_MARK.exec(after)?.[1]).toBe("0");
  expect(after).not.toMatch(STACK);
  const modes = await term.termios();
  expect([on(modes, "icanon"), on(modes, "echo"), on(modes, "isig")]).toEqual([true, true, true]);
}

function records(root: string): Array<Record<string, unknown>> {
  const dir = join(root, ".valarmind/sessions");
  const file = readdirSync(dir)
    .filter((name) => name.endsWith(".jsonl") && !name.endsWith(".damaged.jsonl"))
    .map((name) => join(dir, name))
    .sort()
    .at(-1);
  if (!file) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}
const turnsEnded = (root: string) => records(root).filter((r) => r.kind === "turn_end").length;

// ---------------------------------------------------------------- screens

const count = (text: string, needle: string) => text.split(needle).length - 1;
const flat = (text: string) => text.replace(/\s+/g, " ");
const statusLines = (screen: string) => screen.split("\n").filter((line) => / · prompt \d/.test(line));
const oneFrame = (screen: string) => count(screen, "Ask anything") === 1 && statusLines(screen).length === 1 && !screen.includes("Esc to interrupt");
const widest = (text: string) => Math.max(...text.split("\n").map((line) => line.trimEnd().length));
const PARAGRAPHS = Array.from({ length: 12 }, (_, i) => `Paragraph ${String(i + 1).padStart(2, "0")} of the answer says alpha beta gamma.`);

async function resize(term: TmuxTerminal, columns: number, rows: number): Promise<void> {
  await tmuxIn(term, "resize-window", "-t", term.session, "-x", String(columns), "-y", String(rows));
}

/**
 * Waits for the redraw after a resize: `laidOut` tells the scrollback as printed again (and the
 * clear before it gone: the shell's command line for a first redraw), and `frame` the live frame
 * drawn below it.
 */
async function redrawn(term: TmuxTerminal, what: string, laidOut: (history: string) => boolean, frame: (screen: string) => boolean): Promise<string> {
  await term.waitFor(async (history) => !history.includes(COMMAND_LINE) && laidOut(history) && frame(await term.screen()), what, 5_000);
  return term.history();
}

// ---------------------------------------------------------------- 1. an approval prompt

it("resized while an approval prompt is open: the prompt is there once, answering it works, the turn ends", async () => {
  const root = await makeGitWorkspace({ "README.md": "hi\n" });
  server.setResponder((body) =>
    lastInputItem(body)?.type === "function_call_output"
      ? textStream("Wrote notes.txt as asked.")
      : toolCallStream([{ name: "write_file", arguments: { path: "notes.txt", content: "resized notes\n" } }]),
  );
  const { term, pid } = await startChat(root);
  await term.type(MESSAGE);
  await term.press("Enter");
  await term.waitFor((t) => t.includes("1. Allow once (y)"), "the approval prompt");
  console.info(await term.history());
  await resize(term, 60, 30);
  const history = await redrawn(term, "the redraw at 60 columns", (h) => !h.includes(MESSAGE) && h.includes("Allow write_file?"), (s) => s.includes("1. Allow once (y)"));
  console.info(history);
  expect(count(history, "Allow write_file?")).toBe(1);
  expect(count(history, "1. Allow once (y)")).toBe(1);
  await term.press("y");
  await term.waitFor((t) => t.includes("Wrote notes.txt as asked.") && turnsEnded(root) === 1, "the answer after the approval");
  await term.waitFor(async () => oneFrame(await term.screen()), "the prompt back after the turn", 3_000);
  console.info(await term.history());
  expect(readFileSync(join(root, "notes.txt"), "utf8")).toBe("resized notes\n");
  const after = await term.history();
  expect([count(after, "Allow write_file?"), count(after, "? write_file"), count(after, "✓ write_file write notes.txt (allowed once)")]).toEqual([0, 0, 1]);
  await leaveCleanly(term, pid);
}, 30_000);

// ---------------------------------------------------------------- 2. a multi-line message being typed

it("resized while a multi-line message is typed: the text is still in the input and is sent exactly", async () => {
  const root = await makeGitWorkspace({ "README.md": "hi\n" });
  server.setResponder(() => textStream("Got both lines."));
  const { term, pid } = await startChat(root);
  await term.type("first line of the draft");
  await term.press("C-j");
  await term.type("second line, not sent yet");
  await term.waitFor(async () => (await term.screen()).includes("second line, not sent yet"), "the second line typed");
  console.info(await term.history());
  await resize(term, 60, 30);
  const history = await redrawn(term, "the redraw at 60 columns", () => true, (s) => s.includes("second line, not sent yet"));
  console.info(history);
  expect(count(history, "first line of the draft")).toBe(1);
  expect(count(history, "second line, not sent yet")).toBe(1);
  await term.press("Enter");
  await term.waitFor((t) => t.includes("Got both lines.") && turnsEnded(root) === 1, "the answer");
  expect(server.requests).toHaveLength(1);
  expect(lastUserText(server.requests[0]?.body ?? {})).toBe("first line of the draft\nsecond line, not sent yet");
  await term.waitFor(async () => oneFrame(await term.screen()), "the prompt back after the turn", 3_000);
  const after = await term.history();
  console.info(after);
  expect([count(after, "first line of the draft"), count(after, "second line, not sent yet")]).toEqual([1, 1]);
  await leaveCleanly(term, pid);
}, 30_000);

// ---------------------------------------------------------------- 3. the session picker

it("resized while the /resume picker is open: the picker is there once, choosing a session works", async () => {
  const root = await makeGitWorkspace({ "README.md": "hi\n" });
  server.setResponder((body) => textStream(`Answer to ${lastUserText(body)}.`));
  const env = { OPENAI_BASE_URL: server.baseURL, OPENAI_API_KEY: "sk-test-resize" };
  for (const first of ["earlier session alpha", "earlier session beta"]) {
    const run = await runCli(["chat", "-p", first], { cwd: root, env });
    expect(run.code).toBe(0);
    await Bun.sleep(20);
  }
  const { term, pid } = await startChat(root);
  await term.type("/resume");
  await term.press("Enter");
  await term.waitFor((t) => t.includes("Resume a session") && t.includes("earlier session beta"), "the session picker");
  // The second one (beta) selected before the resize: the picker keeps its state.
  await term.press("Down");
  await term.waitFor((t) => /› \S+ +1 turn\(s\) +earlier session beta/.test(t), "beta selected");
  await resize(term, 60, 30);
  const history = await redrawn(term, "the redraw at 60 columns", (h) => h.includes("Resume a session"), (s) => s.includes("↑/↓ Enter resumes"));
  console.info(history);
  expect(count(history, "Resume a session")).toBe(1);
  const rows = history.split("\n").filter((line) => line.includes("1 turn(s)"));
  expect(rows.map((row) => row.includes("› "))).toEqual([false, true]);
  await term.press("Enter");
  await term.waitFor((t) => /resumed session [0-9a-z]+/.test(t), "the session resumed");
  await term.type("and then?");
  await term.press("Enter");
  await term.waitFor((t) => t.includes("Answer to and then?."), "the answer in the resumed session");
  console.info(await term.history());
  const request = server.requests.at(-1)?.body ?? {};
  const earlier = conversationMessages(request).map((m) => m.content).filter((c) => typeof c === "string" && c.startsWith("earlier session"));
  expect(earlier).toEqual(["earlier session beta"]);
  await term.waitFor(async () => oneFrame(await term.screen()), "the prompt back after the turn", 3_000);
  expect(count(await term.history(), "Resume a session")).toBe(0);
  await leaveCleanly(term, pid);
}, 30_000);

// ---------------------------------------------------------------- 4. mid-stream

const LONG_ANSWER = Array.from({ length: 24 }, (_, i) => `Paragraph ${String(i + 1).padStart(2, "0")} of the long answer says alpha beta gamma delta.`);

it("resized in the middle of a long streaming answer: it continues, each paragraph once, one prompt and one status line", async () => {
  const root = await makeGitWorkspace({ "README.md": "hi\n" });
  const { response, gate } = gatedAfter(textStream(LONG_ANSWER.join("\n\n")), 125);
  server.enqueue(response);
  const { term, pid } = await startChat(root);
  await term.type(MESSAGE);
  await term.press("Enter");
  await gate.reached;
  await term.waitFor((t) => t.includes("Paragraph 10 of the long"), "the answer half-way");
  console.info(await term.history());
  await resize(term, 60, 30);
  const during = await redrawn(term, "the redraw at 60 columns", (h) => !h.includes(MESSAGE) && h.includes("Paragraph 01"), (s) => s.includes("Esc to interrupt"));
  console.info(during);
  expect(count(await term.screen(), "Esc to interrupt")).toBe(1);
  for (const paragraph of LONG_ANSWER.slice(0, 9)) expect([paragraph, count(flat(during), paragraph)]).toEqual([paragraph, 1]);
  gate.release();
  await term.waitFor((t) => turnsEnded(root) === 1 && flat(t).includes(LONG_ANSWER.at(-1) ?? ""), "the end of the answer");
  await term.waitFor(async () => oneFrame(await term.screen()), "the prompt back after the turn", 3_000);
  const history = await term.history();
  console.info(history);
  for (const paragraph of LONG_ANSWER) expect([paragraph, count(flat(history), paragraph)]).toEqual([paragraph, 1]);
  expect(count(flat(history), "please explain the readme")).toBe(1);
  const screen = await term.screen();
  expect([count(screen, "Ask anything"), statusLines(screen).length]).toEqual([1, 1]);
  await leaveCleanly(term, pid);
}, 30_000);
