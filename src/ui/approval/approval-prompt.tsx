import { Box, Text, useInput, usePaste } from "ink";
import { useRef, useState } from "react";
import type { ApprovalDecision } from "../../agent/events.ts";
import * as edit from "../input/editor-buffer.ts";
import { keyAction } from "../input/key-action.ts";
import { useTheme } from "../theme-context.tsx";
import { renderDiffLines } from "../transcript/diff-lines.ts";
import type { PendingApproval } from "../transcript/transcript-items.ts";

interface Choice {
  key: string;
  label: string;
  /** undefined: ask for a note first. */
  decision: ApprovalDecision | undefined;
}

const CHOICES: readonly Choice[] = [
  { key: "y", label: "Allow once", decision: { kind: "allow_once" } },
  { key: "a", label: "Allow for this session", decision: { kind: "allow_session" } },
  { key: "n", label: "Deny", decision: { kind: "deny" } },
  { key: "e", label: "Deny with a note to the model", decision: undefined },
];

interface ApprovalPromptProps {
  approval: PendingApproval;
  /** Diff lines shown before the rest is summarised (keeps the prompt on an 80x24 screen). */
  maxDiffLines: number;
  onAnswer: (decision: ApprovalDecision) => void;
  /** Ctrl+C: the app aborts the turn. */
  onInterrupt: () => void;
}

/** Asks before a write or a shell command: keyboard only, one key per choice. */
export function ApprovalPrompt({ approval, maxDiffLines, onAnswer, onInterrupt }: ApprovalPromptProps) {
  const theme = useTheme();
  const [selected, setSelected] = useState(0);
  const [note, setNote] = useState<edit.EditorBuffer | undefined>(undefined);
  // One answer per request, even if keys arrive faster than renders.
  const answered = useRef(false);
  const noteRef = useRef<edit.EditorBuffer | undefined>(undefined);
  const setNoteBoth = (next: edit.EditorBuffer | undefined) => {
    noteRef.current = next;
    setNote(next);
  };

  const answer = (decision: ApprovalDecision) => {
    if (answered.current) return;
    answered.current = true;
    onAnswer(decision);
  };

  const choose = (choice: Choice | undefined) => {
    if (!choice) return;
    if (choice.decision) answer(choice.decision);
    else setNoteBoth(edit.emptyBuffer);
  };

  useInput((input, key) => {
    const command = keyAction(input, key);
    if (command.type === "interrupt") return onInterrupt();
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
    if (command.type === "down") return setSelected((index) => Math.min(CHOICES.length - 1, index + 1));
    if (command.type === "submit") return choose(CHOICES[selected]);
    if (command.type === "escape") return answer({ kind: "deny" });
    if (command.type === "insert") {
      const digit = Number.parseInt(command.text, 10);
      const byKey = CHOICES.find((choice) => choice.key === command.text.toLowerCase());
      return choose(byKey ?? (Number.isInteger(digit) ? CHOICES[digit - 1] : undefined));
    }
  });

  usePaste((text) => {
    const current = noteRef.current;
    if (current !== undefined) setNoteBoth(edit.insertText(current, text.replace(/\s+/g, " ")));
  });

  const diff = approval.diff ? renderDiffLines(approval.diff, theme, maxDiffLines) : [];
  return (
    <Box flexDirection="column" borderStyle="round" paddingX={1}>
      <Text>
        {theme.warning("Allow ")}
        {theme.bold(approval.name)}
        {theme.warning("?")}
      </Text>
      <Text>{approval.description}</Text>
      {diff.length > 0 && <Text>{diff.join("\n")}</Text>}
      {note === undefined ? (
        <Box flexDirection="column" marginTop={1}>
          {CHOICES.map((choice, index) => (
            <Text key={choice.key}>
              {index === selected ? theme.accent("› ") : "  "}
              {index === selected ? theme.bold(`${index + 1}. ${choice.label}`) : `${index + 1}. ${choice.label}`}
              {theme.dim(` (${choice.key})`)}
            </Text>
          ))}
          <Text>{theme.dim("↑/↓ Enter · y a n e · Esc denies · Ctrl+C interrupts the turn")}</Text>
        </Box>
      ) : (
        <Box flexDirection="column" marginTop={1}>
          <Text>{theme.dim("Note to the model (Enter denies with it, Esc goes back):")}</Text>
          <Text>
            {theme.accent("› ")}
            {note.text.slice(0, note.cursor)}
            {theme.inverse(note.text[note.cursor] ?? " ")}
            {note.text.slice(note.cursor + 1)}
          </Text>
        </Box>
      )}
    </Box>
  );
}
