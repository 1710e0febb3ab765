/**
 * The one question an untrusted folder gets (docs/security.md): its project config would change
 * these settings; trust the folder (they apply, now and later), or not (they are ignored and the
 * question is not asked again). Plain data in, one answer out; the caller stores it.
 */
import { Box, Text, useInput } from "ink";
import { useRef, useState } from "react";
import { keyAction } from "../input/key-action.ts";
import { terminalSafeLiteral as literal } from "../terminal-safe-text.ts";
import { useTheme } from "../theme-context.tsx";

export type FolderTrustAnswer = "trusted" | "untrusted" | "quit";

export interface FolderTrustQuestion {
  root: string;
  /** The project config file, workspace-relative. */
  file: string;
  changes: Array<{ key: string; from: string; to: string; warning?: string }>;
}

interface Choice {
  key: string;
  label: string;
  answer: FolderTrustAnswer;
}

const CHOICES: readonly Choice[] = [
  { key: "t", label: "Trust this folder: apply its project settings", answer: "trusted" },
  { key: "n", label: "Don't trust it: ignore its project settings (default)", answer: "untrusted" },
  { key: "q", label: "Quit", answer: "quit" },
];

export function FolderTrustPrompt({ question, onAnswer }: { question: FolderTrustQuestion; onAnswer: (answer: FolderTrustAnswer) => void }) {
  const theme = useTheme();
  const [selected, setSelected] = useState(1);
  const answered = useRef(false);
  const answer = (value: FolderTrustAnswer) => {
    if (answered.current) return;
    answered.current = true;
    onAnswer(value);
  };
  useInput((input, key) => {
    const command = keyAction(input, key);
    if (command.type === "interrupt" || command.type === "eof") return answer("quit");
    if (command.type === "escape") return answer("untrusted");
    if (command.type === "up") return setSelected((i) => Math.max(0, i - 1));
    if (command.type === "down") return setSelected((i) => Math.min(CHOICES.length - 1, i + 1));
    if (command.type === "submit") return answer(CHOICES[selected]?.answer ?? "untrusted");
    if (command.type === "insert") {
      const choice = CHOICES.find((c) => c.key === command.text.toLowerCase());
      if (choice) answer(choice.answer);
    }
  });
  return (
    <Box flexDirection="column" borderStyle="round" paddingX={1}>
      {/* Paths and values come from the repository: every character shown, controls included. */}
      <Text>{theme.warning("Do you trust this folder?")} {theme.bold(literal(question.root))}</Text>
      <Text>
        It ships {theme.bold(literal(question.file))}, which would change {question.changes.length === 1 ? "this setting" : "these settings"}:
      </Text>
      {question.changes.map((change) => (
        <Text key={change.key}>
          {"  "}
          {theme.bold(literal(change.key))}: {literal(change.from)} → {theme.warning(literal(change.to))}
          {change.warning ? theme.error(`  (${literal(change.warning)})`) : ""}
        </Text>
      ))}
      <Text>{theme.dim("Settings from a repository you did not write can run commands unasked or send your API key elsewhere.")}</Text>
      <Box flexDirection="column" marginTop={1}>
        {CHOICES.map((choice, index) => (
          <Text key={choice.key}>
            {index === selected ? theme.accent("› ") : "  "}
            {index === selected ? theme.bold(`${index + 1}. ${choice.label}`) : `${index + 1}. ${choice.label}`}
            {theme.dim(` (${choice.key})`)}
          </Text>
        ))}
        <Text>{theme.dim("↑/↓ Enter · t n q · the answer is kept in your config (valarmind trust --revoke forgets it)")}</Text>
      </Box>
    </Box>
  );
}
