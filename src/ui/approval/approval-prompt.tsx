import { Box, Text, useInput, usePaste, useWindowSize, type DOMElement } from "ink";
import { useRef, useState, type RefObject } from "react";
import type { ApprovalDecision } from "../../agent/events.ts";
import * as edit from "../input/editor-buffer.ts";
import { keyAction } from "../input/key-action.ts";
import { terminalSafeLiteral } from "../terminal-safe-text.ts";
import { useTheme } from "../theme-context.tsx";
import { renderDiffLines } from "../transcript/diff-lines.ts";
import { shownText, wrapRows } from "../input/editor-rows.ts";
import type { PendingApproval } from "../transcript/transcript-items.ts";
import { approvalChoices, type ApprovalChoice } from "./approval-choices.ts";
import { msSinceTyping, STILL_TYPING_MS, TYPING_GAP_MS } from "../input/typing-clock.ts";

interface ApprovalPromptProps {
  approval: PendingApproval;
  /** Diff lines shown before the rest is summarised (keeps the prompt on the screen). */
  maxDiffLines: number;
  /** The diff's box, measured by the frame budget (../live-frame-budget.ts). */
  diffRef?: RefObject<DOMElement | null>;
  /** The list of answers' box, measured likewise. */
  choicesRef?: RefObject<DOMElement | null>;
  /**
   * A short screen: only the selected answer, in full, and a line of keys. Keys of answers not on
   * screen (the session ones) select them first; Enter then gives them.
   */
  compact?: boolean;
  onAnswer: (decision: ApprovalDecision) => void;
  /** Ctrl+C: the app aborts the turn. */
  onInterrupt: () => void;
  /** Told when the deny note opens or closes: while it is open, pastes are its own (else they go to the message editor). */
  onNoteOpen?: (open: boolean) => void;
  /**
   * Told when the prompt changed its own height (a warning row, another page of a command): the
   * frame budget measures on the app's renders, and a render of the prompt alone would skip it.
   */
  onLayoutChange?: () => void;
}

/**
 * Asks before a write or a shell command: keyboard only, one key per choice. A warning (why this
 * call asks at all) comes first; session choices say exactly what they remember. The request's
 * texts arrive terminal-safe from the reducer, every control character shown (../transcript/safe-input.ts).
 */
export function ApprovalPrompt({ approval, maxDiffLines, diffRef, choicesRef, compact = false, onAnswer, onInterrupt, onNoteOpen, onLayoutChange }: ApprovalPromptProps) {
  const theme = useTheme();
  const choices = approvalChoices(approval.remember);
  const [selected, setSelected] = useState(0);
  const [note, setNote] = useState<edit.EditorBuffer | undefined>(undefined);
  // A command taller than the rows left is shown a page at a time; it runs only once every row of
  // it has been on screen (on a short screen, "y" ran lines the user never saw).
  const { columns } = useWindowSize();
  const [from, setFrom] = useState(0);
  const commandWidth = Math.max(10, columns - COMMAND_ROW_MARGIN);
  const seenAll = useRef(false);
  // While part of a paged command is unseen, the rows of the warning a "y" brings are kept free:
  // appearing, it must not make the frame taller than the budget measured (ink would redraw the
  // whole screen and leave a stale copy of the prompt in the scrollback).
  const paged = (lines: number) => (approval.diff === undefined && approval.command !== undefined ? commandLines(approval.command, lines, commandWidth, from) : undefined);
  const whole = paged(maxDiffLines);
  const shown = whole?.paged === true && !seenAll.current ? paged(Math.max(2, maxDiffLines - warningRows(columns))) : whole;
  if (shown === undefined || shown.end >= shown.total) seenAll.current = true;
  const [unseen, setUnseen] = useState(false);
  // One answer per request, even if keys arrive faster than renders.
  const answered = useRef(false);
  const noteRef = useRef<edit.EditorBuffer | undefined>(undefined);
  const setNoteBoth = (next: edit.EditorBuffer | undefined) => {
    if ((noteRef.current === undefined) !== (next === undefined)) onNoteOpen?.(next !== undefined);
    noteRef.current = next;
    setNote(next);
  };

  const answer = (decision: ApprovalDecision) => {
    if (answered.current) return;
    answered.current = true;
    onAnswer(decision);
  };

  const choose = (choice: ApprovalChoice | undefined) => {
    if (!choice) return;
    const allows = choice.decision !== undefined && choice.decision.kind !== "deny";
    if (allows && !seenAll.current) {
      setUnseen(true);
      return onLayoutChange?.();
    }
    if (choice.decision) answer(choice.decision);
    else setNoteBoth(edit.emptyBuffer);
  };

  // Keys of a message the user was typing as this appeared are theirs, not answers: until a pause
  // in them, only Ctrl+C and Esc count (an "a" mid-word granted every edit for the session).
  const typing = useRef(msSinceTyping() < STILL_TYPING_MS);
  const lastKeyAt = useRef(performance.now() - msSinceTyping());

  useInput((input, key) => {
    const command = keyAction(input, key);
    if (command.type === "interrupt") return onInterrupt();
    const now = performance.now();
    if (typing.current && command.type !== "escape") {
      const gap = now - lastKeyAt.current;
      lastKeyAt.current = now;
      if (gap < TYPING_GAP_MS) return;
      typing.current = false;
    }
    const current = noteRef.current;
    if (current !== undefined) {
      if (command.type === "submit") {
        const text = current.text.trim();
        return answer(text === "" ? { kind: "deny" } : { kind: "deny", note: text });
      }
      if (command.type === "escape") return setNoteBoth(undefined);
      if (command.type === "insert") return setNoteBoth(edit.insertText(current, command.text));
      if (command.type === "backspace") return setNoteBoth(edit.deleteBackward(current));
      if (command.type === "left") return setNoteBoth(edit.moveLeft(current));
      if (command.type === "right") return setNoteBoth(edit.moveRight(current));
      return;
    }
    if (command.type === "up") return setSelected((index) => Math.max(0, index - 1));
    if (command.type === "down") return setSelected((index) => Math.min(choices.length - 1, index + 1));
    if (command.type === "submit") return choose(choices[selected]);
    if (command.type === "escape") return answer({ kind: "deny" });
    if (command.type === "insert" && command.text === " " && shown?.paged === true) {
      setUnseen(false);
      setFrom(shown.end >= shown.total ? 0 : shown.end);
      return onLayoutChange?.();
    }
    if (command.type === "insert") {
      const digit = Number.parseInt(command.text, 10);
      const byKey = choices.find((choice) => choice.key === command.text.toLowerCase());
      const picked = byKey ?? (Number.isInteger(digit) ? choices[digit - 1] : undefined);
      // A session grant is given only with its words on screen: compact, its key shows it first.
      if (compact && picked !== undefined && isSessionChoice(picked) && choices[selected] !== picked) return setSelected(choices.indexOf(picked));
      return choose(picked);
    }
  });

  usePaste((text) => {
    const current = noteRef.current;
    if (current !== undefined) setNoteBoth(edit.insertText(current, text.replace(/\s+/g, " ")));
  });

  const diff = approval.diff ? renderDiffLines(approval.diff, theme, maxDiffLines, columns - DIFF_ROW_MARGIN) : (shown?.lines ?? []);
  // In the answers' box, which the frame budget measures.
  const unseenWarning = unseen && !seenAll.current ? <Text>{theme.warning(UNSEEN_WARNING)}</Text> : null;
  return (
    // Compact (a short screen): no box, and the request on the title's line: three rows fewer.
    <Box flexDirection="column" {...(compact ? {} : { borderStyle: "round" as const, paddingX: 1 })}>
      <Text>
        {theme.warning("Allow ")}
        {theme.bold(approval.name)}
        {theme.warning("?")}
        {compact && approval.warning === undefined ? ` ${approval.description}` : ""}
      </Text>
      {approval.warning !== undefined && <Text>{theme.warning(theme.bold(`⚠ ${approval.warning}`))}</Text>}
      {(!compact || approval.warning !== undefined) && <Text>{approval.description}</Text>}
      {/* One row per line, so the frame budget's line count is its row count. */}
      {diff.length > 0 && (
        <Box ref={diffRef}>
          <Text wrap="truncate-end">{diff.join("\n")}</Text>
        </Box>
      )}
      {note === undefined && compact ? (
        <Box ref={choicesRef} flexDirection="column">
          {unseenWarning}
          <CompactChoices choices={choices} selected={selected} />
        </Box>
      ) : note === undefined ? (
        <Box ref={choicesRef} flexDirection="column" marginTop={1}>
          {unseenWarning}
          {choices.map((choice, index) => (
            <ChoiceRow key={choice.key} choice={choice} index={index} selected={index === selected} />
          ))}
          <Text>{theme.dim(`↑/↓ Enter · ${choices.map((c) => c.key).join(" ")} · Esc denies · Ctrl+C interrupts the turn`)}</Text>
        </Box>
      ) : (
        <Box ref={choicesRef} flexDirection="column" marginTop={compact ? 0 : 1}>
          <Text>{theme.dim("Note to the model (Enter denies with it, Esc goes back):")}</Text>
          <Text>
            {theme.accent("› ")}
            {terminalSafeLiteral(note.text.slice(0, note.cursor))}
            {theme.inverse(terminalSafeLiteral(note.text[note.cursor] ?? " "))}
            {terminalSafeLiteral(note.text.slice(note.cursor + 1))}
          </Text>
        </Box>
      )}
    </Box>
  );
}

const isSessionChoice = (choice: ApprovalChoice) => choice.decision?.kind === "allow_session";

/** One answer: its number, label and key, and its detail (a prefix's limits) dimmed below. */
function ChoiceRow({ choice, index, selected }: { choice: ApprovalChoice; index: number; selected: boolean }) {
  const theme = useTheme();
  const label = `${index + 1}. ${choice.label}`;
  return (
    <Box flexDirection="column">
      <Text>
        {selected ? theme.accent("› ") : "  "}
        {selected ? theme.bold(label) : label}
        {theme.dim(` (${choice.key})`)}
      </Text>
      {choice.detail !== undefined && (
        <Box paddingLeft={5}>
          <Text>{theme.dim(choice.detail)}</Text>
        </Box>
      )}
    </Box>
  );
}

/** The selected answer in full (a session grant's exact words and limits), then the keys. */
function CompactChoices({ choices, selected }: { choices: readonly ApprovalChoice[]; selected: number }) {
  const theme = useTheme();
  const choice = choices[selected];
  if (!choice) return null;
  const keys = choices.filter((c) => !isSessionChoice(c)).map((c) => `${c.key} ${c.label.toLowerCase()}`);
  return (
    <>
      <ChoiceRow choice={choice} index={selected} selected />
      <Text wrap="truncate-end">{theme.dim(`↑/↓ ${choices.length} answers · Enter · ${keys.join(" · ")} · Esc denies`)}</Text>
    </>
  );
}

const UNSEEN_WARNING = "Not allowed yet: part of this command has not been on screen. Space shows the rest (or enlarge the window); Esc denies.";

/** Rows the warning takes at this width (inside the box's border and padding). */
function warningRows(columns: number): number {
  return Math.ceil(UNSEEN_WARNING.length / Math.max(10, columns - DIFF_ROW_MARGIN));
}

/** The box's border and padding, and the "$ " before each row. */
const COMMAND_ROW_MARGIN = 6;
/** The box's border and padding. */
const DIFF_ROW_MARGIN = 4;

/**
 * A command the description shows only the start of, whole, one row per line (every control
 * visible), in the rows the frame leaves, from row `from` on. What does not fit is counted, never
 * silently left out; `end` is the row after the last one shown, `total` the command's rows.
 */
function commandLines(command: string, maxLines: number, width: number, from: number): { lines: string[]; end: number; total: number; paged: boolean } {
  // Wrapped here, not by the terminal: one row per string, so the frame budget's count holds (a long
  // line cut at the edge would hide its end, where `; curl … | sh` goes).
  const rows = command.split("\n").flatMap((line, index) =>
    wrapRows(line, width).map((row, part) => `${index === 0 && part === 0 ? "$ " : "  "}${shownText(line.slice(row.start, row.end))}`),
  );
  if (rows.length <= maxLines) return { lines: rows, end: rows.length, total: rows.length, paged: false };
  // One row says which rows these are and how to see the others.
  const room = Math.max(1, maxLines - 1);
  const start = Math.min(from, Math.max(0, rows.length - room));
  const end = Math.min(rows.length, start + room);
  const where = `… rows ${start + 1}–${end} of ${rows.length} of this command · Space shows ${end < rows.length ? "the next" : "the first"} rows`;
  return { lines: [...rows.slice(start, end), where], end, total: rows.length, paged: true };
}
