/**
 * Audit of the prompt editor's row wrapping (src/ui/input/editor-rows.ts, editor-view.tsx), its
 * keys (editor-buffer.ts, prompt-input.tsx) and its share of the live frame (live-frame-budget.ts).
 * Written as a fault-finding pass; the comments marked "Was" say what each fixed defect did
 * (tabs, grapheme clusters, paste chips split across rows, Up/Down by buffer line, the "… more"
 * lines and the completion menu on small screens). The tmux part (the real binary against the fake Responses server) is
 * skipped when tmux is missing; "a stale copy" is the status line's `goal (no …` row found more
 * than once in the pane's scrollback and screen.
 */
import { afterAll, afterEach, beforeEach, describe, expect, test } from "bun:test";
import { Box } from "ink";
import { cleanup, render } from "ink-testing-library";
import { createElement } from "react";
import stringWidth from "string-width";
import { cursorRow, rowWindow, wrapRows } from "../../src/ui/input/editor-rows.ts";
import { EditorView } from "../../src/ui/input/editor-view.tsx";
import { ThemeContext } from "../../src/ui/theme-context.tsx";
import { createTheme } from "../../src/ui/theme.ts";
import { makeGitWorkspace } from "../agent/support/agent-harness.ts";
import { cleanupTempDirs } from "../support/cli.ts";
import { startFakeResponsesServer, type FakeResponsesServer } from "../support/fake-responses-server.ts";
import { killTerminals, type TmuxTerminal } from "../support/tmux.ts";
import { bracketedPaste, KEYS, renderApp, waitUntil } from "../ui/ink-harness.tsx";
import { count, HAS_TMUX, killStartedRepls, startChat, tmuxIn } from "./support/repl-terminal.ts";

const ESC = "\u001b";
const INVERSE = `${ESC}[7m`;
const strip = (text: string) => text.replace(/\u001b\[[0-9;]*m/g, "");
const words = (n: number, stem = "w") => Array.from({ length: n }, (_, i) => `${stem}${i}`).join(" ");
/** Inverse video without colours: the cursor is visible in the frame, nothing else is styled. */
const cursorTheme = createTheme({ level: 1, color: false });

/** EditorView alone in a box `columns` wide (ink wraps at it, as the terminal would). */
function drawEditor(text: string, cursor: number, columns: number, options: { chips?: string[]; maxRows?: number; theme?: ReturnType<typeof createTheme> } = {}): string[] {
  const view = createElement(EditorView, { buffer: { text, cursor }, chips: options.chips ?? [], placeholder: "Ask anything", focused: true, columns, maxRows: options.maxRows ?? 50 });
  const app = render(createElement(ThemeContext.Provider, { value: options.theme ?? cursorTheme }, createElement(Box, { width: columns }, view)));
  const lines = (app.lastFrame() ?? "").split("\n");
  app.unmount();
  return lines;
}

afterEach(() => cleanup());

describe("rows as drawn", () => {
  test("every cursor offset is drawn once, in the row cursorRow names, at the column the text before it takes", () => {
    for (const [text, columns] of [["alpha beta gamma delta epsilon", 15], ["界面 and 漢字かな交じり文 mixed 界界界界 text", 14], ["one\n\ntwo three four five six", 10]] as const) {
      const rows = wrapRows(text, columns - 3);
      for (let cursor = 0; cursor <= text.length; cursor++) {
        const lines = drawEditor(text, cursor, columns);
        const at = lines.flatMap((line, index) => (line.includes(INVERSE) ? [index] : []));
        const row = cursorRow(rows, cursor);
        expect([cursor, at]).toEqual([cursor, [row]]);
        const before = strip(lines[row]!.slice(0, lines[row]!.indexOf(INVERSE)));
        expect([cursor, stringWidth(before)]).toEqual([cursor, 2 + stringWidth(text.slice(rows[row]!.start, cursor))]);
      }
    }
  });

  test("CJK, emoji, controls, C1 and bidi controls: each row fits the terminal, ink wraps nothing again", () => {
    const texts = ["界".repeat(40), "😀👍🏽❤️".repeat(12), `${ESC}[31mred\u0007\u007f`.repeat(10), "\u0085\u202e".repeat(10), `${words(20)} 界${"x".repeat(30)}`];
    for (const columns of [12, 20, 41]) {
      for (const text of texts) {
        const lines = drawEditor(text, 3, columns);
        expect([text, columns, lines.length]).toEqual([text, columns, wrapRows(text, columns - 3).length]);
        for (const line of lines) expect(stringWidth(line)).toBeLessThanOrEqual(columns);
      }
    }
  });

  // Was: a tab counts 1 cell in wrapRows (cells(): stringWidth("\t") is 0, raised to 1) but ink
  // expands it to the next 8-column stop (squash-text-nodes), so a pasted line with tabs is drawn
  // wider than the terminal and ink wraps it again: more rows than counted, no "  " indent.
  test("tabs: a pasted line with tabs is drawn in the rows counted", () => {
    const text = "a\t".repeat(30);
    const lines = drawEditor(text, 0, 40);
    expect(lines.length).toBe(wrapRows(text, 37).length);
    for (const line of lines) expect(stringWidth(line)).toBeLessThanOrEqual(40);
  });

  // Was: wrapRows walks code points, so a row can end inside a grapheme cluster: an accent
  // starts the next row (drawn over its indent), 👍🏽 shows as 👍 + a lone skin-tone swatch, 🇺🇸
  // pairs re-pair as 🇸🇺 on the next row, a ZWJ family is cut in two.
  test("grapheme clusters: no row starts inside a character as drawn", () => {
    const segmenter = new Intl.Segmenter();
    const cases: Array<[string, number]> = [["ab" + "👍🏽".repeat(6), 17], ["e\u0301".repeat(30), 17], ["🇺🇸".repeat(20), 17], ["👨‍👩‍👧".repeat(4), 7]];
    const splits = cases.flatMap(([text, width]) => {
      const boundaries = new Set([...segmenter.segment(text)].map((s) => s.index));
      return wrapRows(text, width).filter((row) => !boundaries.has(row.start)).map((row) => `${text.slice(0, 4)}… row starts ${JSON.stringify(text.slice(row.start, row.start + 2))}`);
    });
    expect(splits).toEqual([]);
  });

  // Was (cosmetic): a chip label is wrapped at its inner space like words, and highlightChips
  // runs per row, so a chip split across rows loses its accent colour and reads as two fragments.
  test("paste chip: a chip is never split across rows and is drawn in the accent colour", () => {
    const chip = "[pasted 120 lines]";
    const text = `please look at ${chip} and fix`;
    const lines = drawEditor(text, text.length, 30, { chips: [chip], theme: createTheme({ level: 1, color: true }) });
    expect(lines.join("\n")).toContain(`${ESC}[36m${chip}`);
  });
});

describe("keys", () => {
  // Was: moveUp/moveDown (editor-buffer.ts) keep the column as a UTF-16 offset, so Up from
  // column 3 of "abc" under "😀😀😀" lands between the halves of the second emoji; the cursor is a
  // lone surrogate and what is typed there splits the emoji into two lone surrogates, sent so.
  test("Up below an emoji line: the cursor lands on a character, typing keeps the text well formed", async () => {
    const h = renderApp();
    await h.see("Ask anything");
    await h.keys("😀😀😀", KEYS.ctrlJ, "abc", KEYS.up, "x", KEYS.enter);
    await waitUntil(() => h.controller.submitted.length === 1, "the message sent", h.frame);
    const sent = h.controller.submitted[0]!;
    expect([sent, sent.isWellFormed()]).toEqual([sent, true]);
    expect(count(sent, "😀")).toBe(3);
  });

  // Was: Up/Down move by buffer line, not by drawn row: on a prompt typed as one line and shown
  // on several rows, Up from the last row replaces the whole prompt by the previous history entry
  // (Down brings it back, cursor at the end). Up should move one row up; history only from row 0.
  test("Up on the last row of a wrapped line moves one row up, not into history", async () => {
    const h = renderApp({ history: ["older prompt"] });
    await h.see("Ask anything");
    const long = words(80); // 389 characters: 5 rows at 100 columns
    await h.keys(long);
    await h.see("w79");
    await h.keys(KEYS.up, "Z", KEYS.enter);
    await waitUntil(() => h.controller.submitted.length === 1, "the message sent", h.frame);
    expect(h.controller.submitted[0]!.replace("Z", "")).toBe(long);
  });

  test("history: Up recalls a long one-line entry at its end (rows above counted), Down restores the draft", async () => {
    const entry = words(300, "word");
    const h = renderApp({ history: [entry] });
    await h.see("Ask anything");
    await h.keys("draft", KEYS.up);
    await h.see("word299", h.frame);
    expect(h.frame()).toMatch(/… \d+ line\(s\) above/);
    expect(h.frame()).not.toContain("word0 ");
    await h.keys(KEYS.down);
    await waitUntil(() => h.frame().includes("› draft"), "the draft back", h.frame);
  });
});

const it = HAS_TMUX ? test : test.skip;

describe("real terminal", () => {
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

  const open = async (columns: number, rows: number) => (await startChat({ root: await makeGitWorkspace({ "README.md": "hi\n" }), baseURL: server.baseURL, size: { columns, rows } })).term;
  const settle = (term: TmuxTerminal, check: (screen: string) => boolean, what: string) => term.waitFor(async () => check(await term.screen()), what);
  /** Rows the pane's screen shows as the terminal drew them (not joined). */
  const rawScreen = async (term: TmuxTerminal) => (await tmuxIn(term, "capture-pane", "-p", "-t", term.session)).replace(/\n+$/, "").split("\n");

  // Was: editorRows (live-frame-budget.ts) keeps EDITOR_MORE_ROWS = 2 rows for "… N line(s)
  // above/below", but under ~21 columns each of them wraps to 2 rows or more: with the cursor
  // mid-prompt the frame is taller than the screen, its top is cut, and each key leaves a copy.
  it("16 columns, 12 rows, cursor mid-prompt: the frame stays shorter than the screen", async () => {
    const term = await open(16, 12);
    await term.type(words(60));
    await settle(term, (s) => s.includes("w59"), "the end of the prompt");
    await term.press(...Array<string>(90).fill("Left"));
    await term.type("Q");
    await settle(term, (s) => s.includes("Q"), "Q typed mid-prompt");
    await term.type("R");
    await settle(term, (s) => s.includes("QR"), "R typed");
    expect(count(await term.history(), "goal (no")).toBe(1);
    expect((await rawScreen(term)).length).toBeLessThan(12);
  }, 20_000);

  // Was: the same tabs as above, in a real terminal: 200 pasted characters (no chip) fill 3
  // counted rows, drawn on 12; the frame overflows a 12-row screen and every key leaves a copy.
  it("pasted tabs: the prompt stays within its rows and the screen", async () => {
    const term = await open(40, 12);
    await tmuxIn(term, "set-buffer", "--", "a\t".repeat(100));
    await tmuxIn(term, "paste-buffer", "-p", "-t", term.session);
    await term.type("x");
    await settle(term, (s) => /a\s*x\s*$/m.test(s.split("gpt-")[0] ?? ""), "x after the paste");
    await term.type("y");
    await settle(term, (s) => s.includes("xy"), "y typed");
    expect(count(await term.history(), "goal (no")).toBe(1);
  }, 20_000);

  // Was: the completion menu (completion-menu.tsx, 6 rows + "N matches") has no share of the
  // budget: on a 9-row screen "/" makes the frame 11 rows, the "› /" line being typed is scrolled
  // off the screen and each key (↓ to choose) leaves a copy in the scrollback.
  it("completion menu on a 9-row screen: the typed line stays visible, no stale copy", async () => {
    const term = await open(80, 9);
    await term.type("/");
    await settle(term, (s) => s.includes("matches"), "the completion menu");
    await term.press("Down");
    await term.press("Down");
    await settle(term, (s) => s.includes("/compact") && s.includes("matches"), "the menu after ↓");
    expect(await term.screen()).toContain("› /");
    expect(count(await term.history(), "goal (no")).toBe(1);
  }, 20_000);

  it("a long prompt survives resizes (80×24 → 30×10 → 10×9): the cursor row shown, one frame, placeholder truncated", async () => {
    const term = await open(80, 24);
    await term.type(words(120, "word"));
    await term.press("Home");
    await settle(term, (s) => s.includes("› word0 word1"), "the start of the prompt");
    await tmuxIn(term, "resize-window", "-t", term.session, "-x", "30", "-y", "10");
    await settle(term, (s) => s.includes("› word0 word1") && s.includes("line(s) below") && s.includes("Ctrl+D exits"), "the redraw at 30×10");
    await term.type("Q");
    await term.waitFor((t) => count(t, "› Qword0 word1") === 1, "Q at the start, once");
    await term.press("End");
    await settle(term, (s) => s.includes("word119") && s.includes("line(s) above"), "the end of the prompt");
    expect((await rawScreen(term)).every((line) => stringWidth(line) <= 30)).toBe(true);
    await term.press("C-u");
    await tmuxIn(term, "resize-window", "-t", term.session, "-x", "10", "-y", "9");
    // Once the resize settles (200 ms) the screen and scrollback are drawn again: one prompt left.
    await term.waitFor((t) => /^› {2}Ask an…$/m.test(t) && count(t, "Ask an") === 1, "the placeholder truncated to one row, once");
  }, 20_000);
});
