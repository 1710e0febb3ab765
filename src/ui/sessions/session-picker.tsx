import { oneLine } from "../../one-line.ts";
import { Box, Text, useInput } from "ink";
import { useState } from "react";
import type { SessionListing } from "../../agent/front-end-contract.ts";
import { keyAction } from "../input/key-action.ts";
import { terminalSafe } from "../terminal-safe-text.ts";
import { useTheme } from "../theme-context.tsx";

const MAX_ROWS = 8;

interface SessionPickerProps {
  sessions: readonly SessionListing[];
  onChoose: (session: SessionListing) => void;
  onCancel: () => void;
  /** Sessions listed at once (the frame budget's share of the screen); at most MAX_ROWS. */
  maxRows?: number;
}

/** The picker's own rows besides its list (border, title, keys) and the input and status line under it, plus the row the frame keeps free. */
export const PICKER_OTHER_ROWS = 9;

/**
 * What the picker offers, from a listing (oldest first): the other sessions, newest first, so
 * the one a user most likely wants is selected and the oldest are a scroll away.
 */
export function resumableSessions(listings: readonly SessionListing[], currentId: string | undefined): SessionListing[] {
  return listings.filter((session) => session.id !== currentId).reverse();
}

/** `/resume` without an id: pick an earlier session of this repository (newest first). */
export function SessionPicker({ sessions, onChoose, onCancel, maxRows = MAX_ROWS }: SessionPickerProps) {
  // A frame taller than the screen leaves a stale copy in the scrollback at every key.
  const listed = Math.max(1, Math.min(MAX_ROWS, maxRows));
  const theme = useTheme();
  const [selected, setSelected] = useState(0);
  useInput((input, key) => {
    const command = keyAction(input, key);
    if (command.type === "up") setSelected((index) => Math.max(0, index - 1));
    else if (command.type === "down") setSelected((index) => Math.min(sessions.length - 1, index + 1));
    else if (command.type === "escape" || command.type === "interrupt") onCancel();
    else if (command.type === "submit") {
      const session = sessions[selected];
      if (session) onChoose(session);
    }
  });
  const first = Math.max(0, Math.min(selected - listed + 1, sessions.length - listed));
  return (
    <Box flexDirection="column" borderStyle="round" paddingX={1}>
      <Text>{theme.bold("Resume a session")}</Text>
      {sessions.slice(first, first + listed).map((session, index) => {
        const active = first + index === selected;
        // The first message may quote anything (a pasted log, a file): shown terminal-safe.
        const line = terminalSafe(`${session.startedAt}  ${String(session.turns).padStart(3)} turn(s)  ${oneLine(session.firstMessage)}`);
        return (
          <Text key={session.id} wrap="truncate-end">
            {active ? theme.accent("› ") : "  "}
            {active ? theme.bold(line) : line}
          </Text>
        );
      })}
      <Text>{theme.dim("↑/↓ Enter resumes · Esc cancels")}</Text>
    </Box>
  );
}
