/**
 * A fault-finding pass over the REPL as used day to day, in a real terminal: the real binary
 * (bin/valarmind chat) in tmux (NO_COLOR), in a temp git workspace, against the fake Responses
 * server started here; harness: test/terminal/support/repl-terminal.ts. Its focus is what was
 * added in 875fa2c (a resumed session prints its earlier conversation; interrupting a turn gives
 * queued messages back to the editor; a shell command taller than the screen is paged and 'y'
 * counts only once all of it was on screen) and the daily flows around them (/cost, the status
 * line, /help, history with ↑, Ctrl+D, a long paste, resizing).
 *
 * Every defect this pass found is fixed; the comment above each such test says what the user saw
 * and where the cause was. The others are probes of
 * behaviour that held, kept as guards.
 *
 * Sessions to resume are written as transcripts (the records `chat -p` writes) or made with
 * `chat -p`. Every wait polls the screen with a bound; one tmux server at a time, killed after each
 * test with any REPL left (by pid); temp dirs go after the file. Skipped without tmux.
 */
import { afterAll, afterEach, beforeEach, expect, test } from "bun:test";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeGitWorkspace } from "../agent/support/agent-harness.ts";
import { cleanupTempDirs, runCli } from "../support/cli.ts";
import {
  gatedAfter,
  lastInputItem,
  lastUserText,
  startFakeResponsesServer,
  textStream,
  toolCallStream,
  type FakeResponsesServer,
} from "../support/fake-responses-server.ts";
import { killTerminals, type TmuxTerminal } from "../support/tmux.ts";
import { count, EXIT_MARK, HAS_TMUX, killStartedRepls, newestTranscript, on, STACK, startChat as startReplChat, within, statusLines, tmuxIn } from "./support/repl-terminal.ts";

const it = HAS_TMUX ? test : test.skip;

let server: FakeResponsesServer;

beforeEach(() => {
  server = startFakeResponsesServer();
});
afterEach(async () => {
  await killTerminals();
  killStartedRepls();
  await server.close();
});
afterAll(cleanupTempDirs);

// ---------------------------------------------------------------- harness

const startChat = (root: string, args = "", size = { columns: 100, rows: 30 }) => startReplChat({ root, baseURL: server.baseURL, args, size });


/** Polls `check` (not the terminal) until it holds or `timeoutMs` passes. */
async function eventually(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (check()) return true;
    if (performance.now() > deadline) return false;
    await Bun.sleep(25);
  }
}

/**
 * The input editor's rows on a screen, just above the status line: its first row ("› …", or
 * "  … N line(s) above" when it scrolled) and the rows after it, blank ones inside a message
 * included; a hint line below them is left out.
 */
function inputRows(screen: string): string[] {
  const lines = screen.split("\n");
  const status = lines.findIndex((line) => / · prompt \d/.test(line));
  let bottom = status - 1;
  while (bottom >= 0 && !/^(› |  )/.test(lines[bottom] ?? "")) bottom--;
  let top = bottom;
  while (top >= 0) {
    const line = lines[top] ?? "";
    if (line.startsWith("› ")) break;
    const above = lines[top - 1] ?? "";
    if (line.startsWith("  ") || (line === "" && /^(› |  )/.test(above))) top--;
    else {
      top++;
      break;
    }
  }
  return bottom < 0 ? [] : lines.slice(Math.max(0, top), bottom + 1);
}

/** The screen once no turn is running (no working line). */
const idle = async (term: TmuxTerminal) => !(await term.screen()).includes("Esc to interrupt");

/** Lines in tmux's scrollback above the screen (tmux keeps 2,000 by default). */
const scrollbackLines = async (term: TmuxTerminal) => Number(await term.format("#{history_size}"));

interface PastTurn {
  user: string;
  answer?: string;
  tools?: Array<{ name: string; arguments: Record<string, unknown>; output: string }>;
  /** `null`: the transcript has no turn_end for it (valarmind was killed mid-turn). */
  end?: "completed" | "aborted" | null;
}

const SESSION_ID = "d41y0a1d";

/**
 * A session transcript as valarmind writes it (session header, then per turn: user, tool_call,
 * assistant, turn_end), in the workspace's sessions folder; `chat --continue` picks it.
 */
function writeSession(root: string, turns: readonly PastTurn[]): void {
  const dir = join(root, ".valarmind/sessions");
  mkdirSync(dir, { recursive: true });
  const ts = "2026-11-20T10:00:00.000Z";
  const records: unknown[] = [{ v: 1, kind: "session", ts, id: SESSION_ID, started_at: ts, cwd: root, model: "gpt-5.5", valarmind: "0.1.0" }];
  turns.forEach((t, index) => {
    const turn = index + 1;
    records.push({ v: 1, ts, kind: "user", turn, text: t.user });
    let step = 1;
    for (const tool of t.tools ?? []) {
      records.push({ v: 1, ts, kind: "tool_call", turn, step, call_id: `call_${turn}_${step}`, name: tool.name, arguments: JSON.stringify(tool.arguments), output: tool.output, summary: tool.output, is_error: false });
      step++;
    }
    if (t.answer !== undefined) records.push({ v: 1, ts, kind: "assistant", turn, step, text: t.answer });
    if (t.end !== null) records.push({ v: 1, ts, kind: "turn_end", turn, steps: step, stop_reason: t.end ?? "completed" });
  });
  writeFileSync(join(dir, `2026-11-20T10-00-00-${SESSION_ID}.jsonl`), `${records.map((r) => JSON.stringify(r)).join("\n")}\n`);
}

/** The model asks to run `command` with run_shell, then answers "done after tool". */
function shellResponder(command: string): void {
  server.setResponder((body) =>
    lastInputItem(body)?.type === "function_call_output" ? textStream("done after tool") : toolCallStream([{ name: "run_shell", arguments: { command } }]),
  );
}

/** One turn answered, then `/compact` whose fold request the server holds: "running /compact …". */
async function compactWaiting(root: string): Promise<TmuxTerminal> {
  server.enqueue(textStream("First answer."));
  const fold = gatedAfter(textStream("summary of the conversation"), 1);
  server.enqueue(fold.response);
  server.setResponder((body) => textStream(`echo: ${lastUserText(body).slice(0, 60)}`));
  const { term } = await startChat(root);
  await term.type("hello");
  await term.press("Enter");
  await term.waitFor((t) => t.includes("First answer.") && newestTranscript(root).records.some((r) => r.kind === "turn_end"), "the first answer");
  await term.waitFor(() => idle(term), "the turn's end on screen");
  await term.type("/compact");
  await term.press("Enter");
  await fold.gate.reached;
  await term.waitFor((t) => t.includes("running /compact"), "the running /compact line");
  return term;
}

// ---------------------------------------------------------------- 1. resuming

/*
 * Guard: the earlier conversation is printed in order, as it was shown live: markdown rendered
 * (heading, bold, a fenced code block in its frame), wide characters and an emoji whole, a tool
 * row; text a hostile model wrote earlier loses its escape sequences (no window title set, no
 * screen cleared, hidden text visible) and a tool target keeps them as visible pictures.
 */
it("resumed: the earlier turns in order, markdown and wide characters rendered, a hostile answer's escapes inert", async () => {
  const root = await makeGitWorkspace({ "README.md": "hi\n" });
  const E = "\u001b";
  writeSession(root, [
    { user: "question one", answer: "# Overview\n\nSome **bold** words.\n\n```ts\nconst answer = 42;\n```\n\n日本語のテキスト and 👍🏽 end." },
    {
      user: "question two",
      tools: [{ name: "read_file", arguments: { path: `odd${E}[31mname.txt` }, output: "1\tcontent" }],
      answer: `Before ${E}]0;PWNED-TITLE\u0007 mid ${E}[8mHIDDEN${E}[0m ${E}]52;c;ZXZpbA==\u0007 after ${E}[2J${E}[H end of two`,
    },
  ]);
  const { term } = await startChat(root, "--continue", { columns: 80, rows: 40 });
  const shown = await term.waitFor((t) => t.includes("end of two") && t.includes("Ask anything"), "the resumed conversation");
  expect(shown).toContain(`session ${SESSION_ID} resumed: 2 earlier turn(s) below`);
  const order = ["› question one", "Overview", "│ const answer = 42;", "日本語のテキスト and 👍🏽 end.", "› question two", "read_file", "Before", "HIDDEN", "end of two", "Ask anything"].map((needle) => shown.indexOf(needle));
  expect(order.every((at, i) => at >= 0 && (i === 0 || at > (order[i - 1] ?? 0)))).toBe(true);
  expect(shown).not.toContain("**bold**");
  expect(shown).not.toContain("```");
  // The target names a file: every character kept, the escape shown as a picture.
  expect(shown).toContain("odd␛[31mname.txt");
  expect(await term.format("#{pane_title}")).not.toContain("PWNED");
  // Nothing cleared the screen: the banner is still above the conversation.
  expect(shown.indexOf("valarmind · gpt-5.5")).toBeLessThan(shown.indexOf("› question one"));
}, 40_000);

/*
 * Guard: a turn the transcript never closed (valarmind killed mid-answer) is shown with what it
 * got so far and "[stopped by an error]", after a notice saying it never finished.
 */
it("resumed with an unfinished last turn: its partial answer, then [stopped by an error], and the notice", async () => {
  const root = await makeGitWorkspace({ "README.md": "hi\n" });
  writeSession(root, [
    { user: "first question", answer: "first answer" },
    { user: "second question", tools: [{ name: "read_file", arguments: { path: "README.md" }, output: "1\thi" }], answer: "partial answer so far", end: null },
  ]);
  const { term } = await startChat(root, "--continue");
  const shown = await term.waitFor((t) => t.includes("partial answer so far") && t.includes("Ask anything"), "the resumed conversation");
  expect(shown).toContain('turn 2 ("second question") never finished');
  const at = (needle: string) => shown.indexOf(needle);
  expect(at("› first question")).toBeLessThan(at("› second question"));
  expect(at("› second question")).toBeLessThan(at("partial answer so far"));
  expect(at("partial answer so far")).toBeLessThan(at("[stopped by an error]"));
  expect(count(shown, "[stopped by an error]")).toBe(1);
}, 40_000);

/*
 * Guard: a resize right after the resumed conversation was printed redraws it once, in order,
 * with one prompt and one status line.
 */
it("resumed, then resized at once: every earlier turn once, in order, one prompt and one status line", async () => {
  const root = await makeGitWorkspace({ "README.md": "hi\n" });
  const turns = 25;
  writeSession(
    root,
    Array.from({ length: turns }, (_, i) => ({
      user: `question ${i + 1}`,
      answer: `Answer ${i + 1} begins.\n\n\`\`\`ts\nconst v${i + 1} = ${i + 1};\n\`\`\`\n\nAnswer ${i + 1} ends with a line long enough to wrap once the terminal is narrow.`,
    })),
  );
  const { term } = await startChat(root, "--continue", { columns: 100, rows: 30 });
  await tmuxIn(term, "resize-window", "-t", term.session, "-x", "50", "-y", "20");
  // The redraw clears the scrollback: the typed command line goes with it.
  const redrawn = await term.waitFor((t) => !t.includes("chat --continue; echo") && t.includes(`Answer ${turns} ends`) && t.includes("Ask anything"), "the redraw at 50 columns");
  for (let i = 1; i <= turns; i++) expect(count(redrawn, `Answer ${i} begins.`)).toBe(1);
  const where = Array.from({ length: turns }, (_, i) => redrawn.indexOf(`› question ${i + 1}\n`));
  expect(where.every((at, i) => at >= 0 && (i === 0 || at > (where[i - 1] ?? 0)))).toBe(true);
  const screen = await term.screen();
  expect(count(screen, "Ask anything")).toBe(1);
  expect(statusLines(screen)).toHaveLength(1);
}, 40_000);

/*
 * Fixed; was a defect (medium: the resumed conversation is not what was shown live). A message sent with an
 * `@path` attachment was shown live as typed ("› read @README.md please"). Resumed, the same row
 * prints the message as recorded: the attachment note and the whole file inside
 * <attachment path=…> … </attachment> (a 2,000-line file: 2,000 lines under the row, using up the
 * ~1,000-line budget so older turns are left out). The same happens to a paste that was shown as a
 * chip ("[pasted 200 lines]": all 200 lines come back), to a custom /command (its expanded text
 * instead of "/review src/app.ts") and to the undo note added to a message after /undo.
 * Where: src/session/past-turns.ts:51 takes the `user` record's text, which
 * src/agent/turn-opening.ts:74 records with attachments expanded and the undo note added;
 * src/ui/transcript/earlier-items.ts:19 prints it as the user row.
 * Fix: record what the REPL displayed (e.g. a `display` field on the user record, or the typed
 * text before expandAttachmentsSafely/withUndoNote) and show that; for older transcripts, cut the
 * text at the attachment note (splitMessage in src/prompt/attachments.ts finds the blocks) and show
 * "(+ README.md attached)".
 */
it("a resumed message that attached a file shows the words as typed and names the attachment", async () => {
  const root = await makeGitWorkspace({ "README.md": "SECRET-LOOKING README CONTENT line 1\nline 2 of the readme\n" });
  server.setResponder(() => textStream("The readme has two lines."));
  const made = await runCli(["chat", "-p", "read @README.md please"], { cwd: root, env: { OPENAI_BASE_URL: server.baseURL } });
  expect(made.code).toBe(0);
  const { term } = await startChat(root, "--continue", { columns: 80, rows: 30 });
  const shown = await term.waitFor((t) => t.includes("The readme has two lines.") && t.includes("Ask anything"), "the resumed conversation");
  expect(shown).toContain("› read @README.md please");
  expect(shown).not.toContain("<attachment");
  expect(shown).not.toContain("SECRET-LOOKING README CONTENT");
  expect(shown).not.toContain("[valarmind: each attachment below");
}, 40_000);

/*
 * Fixed; was a defect (medium: resuming is slow and the start of the resumed conversation is lost). docs/repl.md:
 * the earlier conversation is printed "newest turns up to about 1,000 lines". The last turn is
 * always printed whole, however long: a session whose last answer is a 20,000-line log prints all
 * 20,000 lines (6.6 s before the prompt on the 2-core machine, against 1.2 s), and the first line
 * saying what was resumed and how to see it all scrolls out of the terminal's scrollback (tmux
 * keeps 2,000 lines). Here: a 5,000-line answer.
 * Where: src/ui/transcript/earlier-items.ts:53 (`if (groups.length > 0 && …) break;`: the first
 * group, the last turn, is taken whatever its size).
 * Fix: cut an answer that does not fit to its last lines, as reprintWindow does after a resize
 * (markdownTail in src/ui/transcript/reprint-window.ts, reopening a code fence), and say how many
 * lines were left out in the first line.
 */
it("resuming a session whose last answer is 5,000 lines prints its tail, and says what was left out", async () => {
  const root = await makeGitWorkspace({ "README.md": "hi\n" });
  const lines = 5_000;
  writeSession(root, [
    { user: "first question", answer: "first answer" },
    { user: "dump the log", answer: Array.from({ length: lines }, (_, i) => `log line ${i + 1}`).join("\n") },
  ]);
  const { term } = await startChat(root, "--continue", { columns: 80, rows: 30 });
  const shown = await term.waitFor((t) => t.includes(`log line ${lines}\n`) && t.includes("Ask anything"), "the resumed conversation", 30_000);
  // About 1,000 lines of earlier conversation, not 5,000; the line saying what was resumed still there.
  expect(await scrollbackLines(term)).toBeLessThan(1_500);
  expect(shown).toContain(`session ${SESSION_ID} resumed`);
}, 50_000);

/*
 * Fixed; was a defect (medium: resuming takes seconds and floods the scrollback). The ~1,000-line budget counts
 * source lines, not rows on screen: an answer of one long line (minified JSON, a base64 blob, a
 * generated one-liner) counts as one line however many rows it wraps to. 50 turns with a 20,000
 * character line each took 14.7 s to show the prompt (12,500 rows printed); here 40 turns of 4,000
 * characters: about 2,000 rows at 80 columns for an estimate of ~200 lines.
 * Where: src/ui/transcript/earlier-items.ts:42 (`lines` sums estimatedLines) with
 * src/ui/transcript/reprint-window.ts:25 estimatedLines (`text.split("\n").length`, no wrapping;
 * the resize reprint shares it). Fix: count rows at the terminal's width (ceil(stringWidth(line) /
 * columns) per line, or at least length / columns) and cut a line-heavy answer like a long one.
 */
it("resuming 40 turns of long one-line answers prints about 1,000 rows (the budget counts wrapped rows)", async () => {
  const root = await makeGitWorkspace({ "README.md": "hi\n" });
  const turns = 40;
  writeSession(root, Array.from({ length: turns }, (_, i) => ({ user: `q${i + 1}`, answer: `START${i + 1} ${"x".repeat(4_000)} END${i + 1}` })));
  const { term } = await startChat(root, "--continue", { columns: 80, rows: 30 });
  const shown = await term.waitFor((t) => t.includes(`END${turns}`) && t.includes("Ask anything"), "the resumed conversation", 30_000);
  expect(await scrollbackLines(term)).toBeLessThan(1_500);
  expect(shown).toContain(`session ${SESSION_ID} resumed`);
}, 50_000);

// ---------------------------------------------------------------- 2. queued messages

/*
 * Guard: messages sent while a turn runs are queued; Esc stops the turn and gives them back to
 * the editor, before the draft being typed, and sends nothing; Enter then sends them as one
 * message. Ctrl+C does the same.
 */
it("queued messages: Esc (and Ctrl+C) stop the turn and put them back before the draft; nothing is sent until Enter", async () => {
  const root = await makeGitWorkspace({ "README.md": "hi\n" });
  const first = gatedAfter(textStream("Working on the first one, this is a long answer."), 4);
  const third = gatedAfter(textStream("Working on the third one, another long answer."), 4);
  server.enqueue(first.response, textStream("answer to the restored message"), third.response);
  server.setResponder(() => textStream("unexpected"));
  const { term } = await startChat(root);
  await term.type("first message");
  await term.press("Enter");
  await first.gate.reached;
  await term.type("second message");
  await term.press("Enter");
  await term.waitFor(async () => (await term.screen()).includes("1 message(s) queued"), "one queued message");
  await term.type("third");
  await term.press("Enter");
  await term.waitFor(async () => (await term.screen()).includes("2 message(s) queued"), "two queued messages");
  await term.type("draft");
  await term.waitFor(async () => inputRows(await term.screen()).some((row) => row.includes("draft")), "the draft in the input");
  await term.press("Escape");
  await term.waitFor(async (t) => t.includes("[aborted]") && (await idle(term)) && inputRows(await term.screen()).join("\n").includes("second message"), "the queued messages back in the input");
  const rows = inputRows(await term.screen()).join("\n");
  expect(rows.indexOf("second message")).toBeLessThan(rows.indexOf("third"));
  expect(rows.indexOf("third")).toBeLessThan(rows.indexOf("draft"));
  expect(await eventually(() => server.requests.length > 1, 1_000)).toBe(false);

  await term.press("Enter");
  await term.waitFor((t) => t.includes("answer to the restored message"), "the answer to the restored message");
  expect(lastUserText(server.requests[1]?.body ?? {})).toBe("second message\n\nthird\n\ndraft");
  await term.waitFor(() => idle(term), "the turn's end");

  await term.type("another one");
  await term.press("Enter");
  await third.gate.reached;
  await term.type("queued again");
  await term.press("Enter");
  await term.waitFor(async () => (await term.screen()).includes("1 message(s) queued"), "the message queued");
  await term.press("C-c");
  await term.waitFor(async () => (await idle(term)) && inputRows(await term.screen()).join("\n").includes("queued again"), "the queued message back after Ctrl+C");
  expect(await eventually(() => server.requests.length > 3, 1_000)).toBe(false);
}, 50_000);

/*
 * Fixed; was a defect (low-medium: a paste comes back as a wall of text). A paste of 6 lines or more is one
 * chip in the editor ("[pasted 40 lines]"); sent while a turn runs, it is queued. Esc gives it
 * back, but as its 40 raw lines: the editor shows "… 34 line(s) above" and the last rows of the
 * log, the chip gone (a 2 MB paste would come back as 2 MB of editor text, which the chip exists
 * to avoid). Where: src/ui/app.tsx:139 (interruptTurn gives back `item.text`, the text with chips
 * expanded; `display` is dropped) and src/ui/input/prompt-input.tsx:83 (restore sets the buffer
 * with edit.bufferOf, no paste store). Fix: give back `display` together with the chips' texts
 * (queue the PasteStore with the message) and merge them into the editor's paste store.
 */
it("a queued paste given back by Esc comes back as its [pasted 40 lines] chip", async () => {
  const root = await makeGitWorkspace({ "README.md": "hi\n" });
  const first = gatedAfter(textStream("Working on the first one, this is a long answer."), 4);
  server.enqueue(first.response);
  server.setResponder(() => textStream("later answer"));
  const { term } = await startChat(root, "", { columns: 80, rows: 24 });
  await term.type("first message");
  await term.press("Enter");
  await first.gate.reached;
  await tmuxIn(term, "set-buffer", "-b", "log", Array.from({ length: 40 }, (_, i) => `log line ${i + 1}`).join("\n"));
  await tmuxIn(term, "paste-buffer", "-p", "-b", "log", "-t", term.session);
  await term.waitFor(async () => (await term.screen()).includes("[pasted 40 lines]"), "the paste chip");
  await term.press("Enter");
  await term.waitFor(async () => (await term.screen()).includes("1 message(s) queued"), "the paste queued");
  await term.press("Escape");
  await term.waitFor(async (t) => t.includes("[aborted]") && (await idle(term)) && inputRows(await term.screen()).join("\n").trim() !== "", "the paste back in the input");
  const rows = inputRows(await term.screen()).join("\n");
  expect(rows).toContain("[pasted 40 lines]");
  expect(rows).not.toContain("log line 40");
}, 40_000);

/*
 * Fixed; was a defect (medium: the hint promises the opposite of what happens). While /compact waits on the
 * model, a message sent is queued and the hint says "1 message(s) queued; sent when the current
 * turn ends (Esc stops it and brings them back here)". Esc cancels /compact, and the queued
 * message is sent to the model at once instead of coming back to the editor.
 * Where: src/ui/app.tsx:282 (onEscape → `command.abort()` when no turn runs; only interruptTurn,
 * app.tsx:130, gives the queue back) and app.tsx:237 (the hint is the same whatever is running).
 * Fix: give the queue back when Esc/Ctrl+C cancel a command too (share the restore of
 * interruptTurn), or word the hint for what is running. The test holds the REPL to its hint.
 */
it("a message queued during /compact comes back to the editor when Esc cancels it, as the hint says", async () => {
  const root = await makeGitWorkspace({ "README.md": "hi\n" });
  const term = await compactWaiting(root);
  await term.type("queued while compacting");
  await term.press("Enter");
  await term.waitFor(async () => (await term.screen()).includes("1 message(s) queued"), "the queued hint");
  const promised = (await term.screen()).includes("Esc stops it and brings them back here");
  await term.press("Escape");
  await term.waitFor(async () => !(await term.screen()).includes("running /compact") && (await idle(term)), "/compact cancelled");
  const sent = await eventually(() => server.requests.some((r) => lastUserText(r.body) === "queued while compacting"), 1_500);
  if (promised) {
    expect(sent).toBe(false);
    expect(inputRows(await term.screen()).join("\n")).toContain("queued while compacting");
  }
}, 40_000);

/*
 * Fixed; was a defect (medium: two contradicting instructions on one screen). A message queued while the
 * answer streams, then the model asks to run a command: the approval box says "Esc denies" and,
 * right under it, the queue hint says "(Esc stops it and brings them back here)". Esc denies the
 * call, the turn goes on, and the queued message is sent when it ends: it never comes back.
 * Where: src/ui/app.tsx:237 (the hint does not know an approval owns Esc) and the approval's Esc,
 * src/ui/approval/approval-prompt.tsx:106 (a deny, not an interrupt: interruptTurn, which gives
 * the queue back, runs only on Ctrl+C there). Fix: while an approval is open, word the hint for
 * Ctrl+C ("Ctrl+C stops the turn and brings them back here"), or hide it. The test holds the
 * REPL to what its screen says Esc does with the queue.
 */
it("with a message queued and an approval open, the hint names Ctrl+C, which does bring the message back", async () => {
  const root = await makeGitWorkspace({ "README.md": "hi\n" });
  const asking = gatedAfter(toolCallStream([{ name: "run_shell", arguments: { command: "rm -rf build" } }], { text: "I will clean the build folder now." }), 6);
  server.enqueue(asking.response);
  server.setResponder((body) => (lastInputItem(body)?.type === "function_call_output" ? textStream("done after tool") : textStream(`echo: ${lastUserText(body)}`)));
  const { term } = await startChat(root);
  await term.type("clean the build");
  await term.press("Enter");
  await asking.gate.reached;
  await term.type("wait, do not delete anything");
  await term.press("Enter");
  await term.waitFor(async () => (await term.screen()).includes("1 message(s) queued"), "the message queued");
  asking.gate.release();
  await term.waitFor(async () => (await term.screen()).includes("1. Allow once (y)"), "the approval prompt");
  const screen = await term.screen();
  expect(screen).toContain("Esc denies");
  const promised = screen.includes("Esc stops it and brings them back here");
  await term.press("Escape");
  await term.waitFor(async (t) => t.includes("(denied)") && (await idle(term)), "the call denied and the turn's end");
  const sent = await eventually(() => server.requests.some((r) => lastUserText(r.body) === "wait, do not delete anything"), 1_500);
  if (promised) {
    expect(sent).toBe(false);
    expect(inputRows(await term.screen()).join("\n")).toContain("wait, do not delete anything");
  }
}, 40_000);

/*
 * Fixed; was a defect (low: the cancel is reported as a failure of sorts, and the reassurance is missing).
 * docs/repl.md: Esc or Ctrl+C cancels a /compact waiting on the model: "cancelled; nothing was
 * changed by it". The panel shows instead
 *     ── /compact /compact
 *     The operation was aborted.
 * Where: src/cli/chat/chat-controller.ts:140 (runCommand catches the AbortError and resolves with
 * its message, titled "/compact"), so the rejection branch of src/ui/slash/use-command-runner.ts:50
 * that writes "cancelled; nothing was changed by it" never runs; the "/compact" title is not the
 * command's bare name, so src/ui/transcript/command-panel.tsx:19 repeats it.
 * Fix: rethrow an abort in runCommand when `signal.aborted` (or return the cancel text there).
 */
it("Esc during /compact says 'cancelled; nothing was changed by it'", async () => {
  const root = await makeGitWorkspace({ "README.md": "hi\n" });
  const term = await compactWaiting(root);
  await term.press("Escape");
  const panel = await term.waitFor(async (t) => t.includes("── /compact") && !(await term.screen()).includes("running /compact"), "the /compact panel after the cancel");
  expect(panel).toContain("cancelled; nothing was changed by it");
  expect(panel).not.toContain("── /compact /compact");
}, 40_000);

// ---------------------------------------------------------------- 3. approving a tall shell command

/*
 * Guard: on a 14-row screen a 9-line command whose last line is the dangerous one is paged; 'y'
 * before its last row was on screen says so and runs nothing; Space pages to the end, then 'y'
 * runs it.
 */
it("a command taller than a 14-row screen: 'y' runs nothing until Space has shown its last row, then runs it", async () => {
  const root = await makeGitWorkspace({ "README.md": "hi\n" });
  const command = [...Array.from({ length: 8 }, (_, i) => `echo step ${i + 1}`), "touch PWNED"].join("\n");
  shellResponder(command);
  const { term } = await startChat(root, "", { columns: 80, rows: 14 });
  await term.type("run the steps");
  await term.press("Enter");
  await term.waitFor(async () => /rows 1–\d+ of 9 of this command/.test(await term.screen()), "the first page of the command");
  expect(await term.screen()).not.toContain("touch PWNED");
  await term.press("y");
  await term.waitFor(async () => (await term.screen()).includes("Not allowed yet"), "the refusal of 'y'");
  expect(existsSync(join(root, "PWNED"))).toBe(false);
  let pages = 0;
  for (; pages < 12 && !(await term.screen()).includes("touch PWNED"); pages++) {
    const before = /rows (\d+)–/.exec(await term.screen())?.[1];
    await term.press("Space");
    await term.waitFor(async () => /rows (\d+)–/.exec(await term.screen())?.[1] !== before, "the next page");
  }
  expect(pages).toBeGreaterThan(0);
  expect(await term.screen()).toContain("touch PWNED");
  expect(existsSync(join(root, "PWNED"))).toBe(false);
  await term.press("y");
  await term.waitFor((t) => t.includes("done after tool"), "the command run and the answer");
  expect(existsSync(join(root, "PWNED"))).toBe(true);
}, 40_000);

/*
 * Fixed; was a defect (medium: the prompt overflows the screen and leaves a copy in the scrollback). On a
 * 16-row screen, 'y' before the whole command was seen adds the two-row warning "Not allowed yet:
 * part of this command has not been on screen…" to the prompt, but the command rows are not
 * shortened for it: the live frame becomes as tall as the screen (16 rows), ink clears and redraws
 * the whole screen, and tmux often keeps a stale copy of the prompt in the scrollback. On a 12×50
 * screen the warning wraps to three rows and the frame's top (the tool row) is pushed off screen.
 * Where: src/ui/approval/approval-prompt.tsx:70 (`setUnseen(true)`: state of the prompt alone, so
 * only ApprovalPrompt re-renders) with src/ui/live-frame-budget.ts:116 (the measuring layout
 * effect lives in App and runs only when App renders: the taller answers box is never measured, so
 * maxDiffLines stays as it was). Fix: lift `unseen` (and the page `from`) into App or call a
 * budget "remeasure" callback when it changes, or reserve the warning's rows in the budget while a
 * command is paged.
 */
it("'y' on a paged command at 16 rows: the 'Not allowed yet' warning keeps the live frame shorter than the screen", async () => {
  const root = await makeGitWorkspace({ "README.md": "hi\n" });
  const command = [...Array.from({ length: 30 }, (_, i) => `echo step ${i + 1}`), "touch PWNED"].join("\n");
  shellResponder(command);
  const { term } = await startChat(root, "", { columns: 80, rows: 16 });
  await term.type("run the steps");
  await term.press("Enter");
  await term.waitFor(async () => /rows 1–\d+ of 31 of this command/.test(await term.screen()), "the paged command");
  expect(count(await term.history(), "Allow run_shell?")).toBe(1);
  await term.press("y");
  await term.waitFor(async () => (await term.screen()).includes("Not allowed yet"), "the refusal of 'y'");
  // Let the budget re-measure if it is going to (a bounded wait for a shorter page).
  await within(term, async () => /rows 1–[1-3] of 31/.test(await term.screen()), 1_000);
  const screen = await term.screen();
  expect(screen).toContain("? run_shell");
  // The frame (the tool row's top margin down to the goal line) stays at least one row shorter
  // than the screen (docs/repl.md, Colors).
  const frameTop = screen.split("\n").findIndex((line) => line.startsWith("? run_shell"));
  const frameBottom = screen.split("\n").findIndex((line) => line.startsWith("goal "));
  expect(frameBottom - frameTop + 2).toBeLessThan(16);
  expect(count(await term.history(), "Allow run_shell?")).toBe(1);
  expect(existsSync(join(root, "PWNED"))).toBe(false);
}, 40_000);

// ---------------------------------------------------------------- 4. daily flows

/*
 * Guard: three turns with usage; the status line shows the cached share and the session's
 * tokens, /cost the same figures, /help the commands and keys; Ctrl+D leaves with exit 0 and the
 * terminal restored.
 */
it("after three turns: status line and /cost agree, /help lists commands and keys, Ctrl+D leaves cleanly", async () => {
  const root = await makeGitWorkspace({ "README.md": "hi\n" });
  let n = 0;
  server.setResponder(() => {
    n++;
    return textStream(`answer number ${n}`, { usage: { input_tokens: 1000 * n, cached_tokens: n > 1 ? 800 * (n - 1) : 0, output_tokens: 50 } });
  });
  const { term } = await startChat(root);
  for (let i = 1; i <= 3; i++) {
    await term.type(`question ${i}`);
    await term.press("Enter");
    await term.waitFor(async () => (await term.screen()).includes(`answer number ${i}`) && (await idle(term)), `answer ${i}`);
  }
  // 6,000 input (2,400 cached: 40%), 150 output; effective 3,600 + 240.
  await term.waitFor(async () => (statusLines(await term.screen())[0] ?? "").includes("session 6.2k"), "the status after three turns");
  const status = statusLines(await term.screen())[0] ?? "";
  expect(status).toContain("cached 40%");
  expect(status).toContain("eff 3.8k");
  await term.type("/cost");
  await term.press("Enter");
  const cost = await term.waitFor((t) => t.includes("requests: 3"), "the /cost panel");
  expect(cost).toContain("input: 6.0k tokens, 2.4k of them cached (40%)");
  expect(cost).toContain("effective input: 3.8k tokens");
  expect(cost).toContain("output: 150 tokens");
  await term.type("/help");
  await term.press("Enter");
  const help = await term.waitFor((t) => t.includes("Ctrl+C twice on an empty prompt or Ctrl+D exits"), "the /help panel");
  expect(help).toContain("/resume [ID]");
  expect(help).not.toMatch(STACK);
  expect(server.requests).toHaveLength(3);
  await term.press("C-d");
  const after = await term.waitFor((t) => EXIT_MARK.test(t), "the CLI to exit");
  expect(EXIT_MARK.exec(after)?.[1]).toBe("0");
  const modes = await term.termios();
  expect([on(modes, "icanon"), on(modes, "echo")]).toEqual([true, true]);
}, 50_000);

/*
 * Fixed; was a defect (medium: history cannot go past a slash command). ↑ on the first row browses the prompt
 * history (docs/repl.md). After "question one", "/cost", "question three": ↑ shows
 * "question three", ↑ shows "/cost" and opens the command completion menu under it, and from then
 * on ↑ moves in that one-entry menu: "question one" and everything older cannot be reached (until
 * Esc closes the menu, which nothing says).
 * Where: src/ui/input/prompt-input.tsx:157 (`case "up": if (menu.open) …` takes ↑ for the menu,
 * and a buffer recalled from history opens it like typed text).
 * Fix: keep the menu closed for a buffer recalled from history (set `dismissedText` to the
 * recalled text in browseHistory, prompt-input.tsx:114), or let ↑ on the menu's first entry go on
 * to history.
 */
it("↑ through the history goes past a slash command to older messages", async () => {
  const root = await makeGitWorkspace({ "README.md": "hi\n" });
  let n = 0;
  server.setResponder(() => textStream(`answer number ${++n}`));
  const { term } = await startChat(root);
  await term.type("question one");
  await term.press("Enter");
  await term.waitFor(async () => (await term.screen()).includes("answer number 1") && (await idle(term)), "the first answer");
  await term.type("/cost");
  await term.press("Enter");
  await term.waitFor((t) => t.includes("── /cost"), "the /cost panel");
  await term.type("question three");
  await term.press("Enter");
  await term.waitFor(async () => (await term.screen()).includes("answer number 2") && (await idle(term)), "the second answer");
  const input = async () => inputRows(await term.screen()).join("\n");
  await term.press("Up");
  await term.waitFor(async () => (await input()).includes("› question three"), "question three recalled");
  await term.press("Up");
  await term.waitFor(async () => (await input()).includes("› /cost"), "/cost recalled");
  await term.press("Up");
  const reached = await within(term, async () => (await input()).includes("› question one"), 2_000);
  expect(reached).toBe(true);
}, 40_000);
