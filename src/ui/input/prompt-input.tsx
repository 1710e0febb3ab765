import { Box, Text, useInput, usePaste, type DOMElement } from "ink";
import { useCallback, useEffect, useRef, useState, type RefObject } from "react";
import type { SlashCommandInfo } from "../../agent/front-end-contract.ts";
import { useTheme } from "../theme-context.tsx";
import { applyCompletion, completionContext } from "./completion.ts";
import { CompletionMenu } from "./completion-menu.tsx";
import * as edit from "./editor-buffer.ts";
import { EditorView } from "./editor-view.tsx";
import { moveByRow, rowWidth } from "./editor-rows.ts";
import { keyAction, type EditorCommand } from "./key-action.ts";
import { addChip, chipEndingAt, expandChips, mergeChips, shouldChip, type PasteStore } from "./paste-chips.ts";
import { historyCursor, historyNext, historyPrevious, historyPush, type HistoryCursor } from "./prompt-history.ts";
import { useCompletion } from "./use-completion.ts";
import { noteTyping } from "./typing-clock.ts";

export interface PromptInputProps {
  /** False while another prompt (an approval, a picker) owns the keyboard. */
  active: boolean;
  /** Pastes still land in the editor while an approval owns the keys (a paste is never an answer); default `active`. */
  pasteActive?: boolean;
  busy: boolean;
  /** Saved history, oldest first; the editor starts browsing from its end. */
  history: readonly string[];
  commands: readonly SlashCommandInfo[];
  completePath: (prefix: string) => Promise<string[]>;
  /** `text` has pasted chips expanded; `display` is what the editor showed, `pastes` its chips' texts. */
  onSubmit: (text: string, display: string, pastes: PasteStore) => void;
  /** Ctrl+C during a turn or on an empty prompt. */
  onInterrupt: () => void;
  /** Esc with no completion menu to close. */
  onEscape: () => void;
  /** Ctrl+D on an empty prompt. */
  onEof: () => void;
  /** Any other key: the app disarms its "press Ctrl+C again" state. */
  onActivity: () => void;
  onError: (message: string) => void;
  hint: string | undefined;
  /** The terminal's width, and the rows of text the editor may draw (the live frame's budget). */
  columns: number;
  maxRows?: number;
  /** Measured by the live frame's budget. */
  editorRef?: RefObject<DOMElement | null>;
  /** The completion menu's choices shown at most, and its box (measured by the budget too). */
  maxMenuRows?: number;
  menuRef?: RefObject<DOMElement | null>;
  /** Messages given back to the editor (queued ones when a turn is interrupted), as they showed: put before what is typed. */
  restore?: { text: string; pastes: PasteStore; seq: number };
}

const PLACEHOLDER = "Ask anything · / for commands · @ for files";

interface EditorState {
  buffer: edit.EditorBuffer;
  pastes: PasteStore;
  history: HistoryCursor;
  selected: number;
  /** The text for which the user closed the completion menu with Esc. */
  dismissedText: string | undefined;
}

export function PromptInput(props: PromptInputProps) {
  const theme = useTheme();
  const initial: EditorState = {
    buffer: edit.emptyBuffer,
    pastes: new Map(),
    history: historyCursor(props.history),
    selected: 0,
    dismissedText: undefined,
  };
  const [state, setState] = useState<EditorState>(initial);
  // Keys can arrive several per tick (fast typing, unbracketed paste): each must see the last edit.
  const latest = useRef<EditorState>(initial);
  const update = useCallback((patch: Partial<EditorState>) => {
    latest.current = { ...latest.current, ...patch };
    setState(latest.current);
  }, []);
  const completion = useCompletion(state.buffer, props.commands, props.completePath, props.onError);

  useEffect(() => update({ history: historyCursor(props.history) }), [props.history, update]);
  useEffect(() => {
    if (props.restore === undefined) return;
    const typed = latest.current.buffer.text;
    const back = mergeChips(props.restore.text, props.restore.pastes, latest.current.pastes);
    update({ buffer: edit.bufferOf(typed.trim() === "" ? back.text : `${back.text}\n\n${typed}`), pastes: back.store });
    // Once per restore: its seq changes, nothing else.
  }, [props.restore?.seq]);
  useEffect(() => update({ selected: 0 }), [completion.context?.kind, completion.context?.query, update]);

  /** The menu applies only if the items were computed for the buffer as it is now (keys can outrun renders). */
  const menuFor = (current: EditorState) => {
    const shown = completion.context;
    const now = completionContext(current.buffer);
    const open =
      shown !== undefined &&
      now !== undefined &&
      now.kind === shown.kind &&
      now.query === shown.query &&
      now.start === shown.start &&
      completion.items.length > 0 &&
      current.dismissedText !== current.buffer.text;
    const chosen = open ? completion.items[Math.min(current.selected, completion.items.length - 1)] : undefined;
    return { open, chosen, context: open ? now : undefined };
  };

  const run = (command: EditorCommand) => {
    const s = latest.current;
    const { buffer, pastes } = s;
    const menu = menuFor(s);
    const setBuffer = (next: edit.EditorBuffer) => update({ buffer: next });
    const acceptCompletion = () => {
      if (menu.chosen && menu.context) setBuffer(applyCompletion(buffer, menu.context, menu.chosen.value));
    };
    const browseHistory = (direction: "up" | "down") => {
      const step = direction === "up" ? historyPrevious(s.history, buffer.text) : historyNext(s.history);
      // A recalled "/cost" must not open the completion menu, which would take the next ↑.
      if (step) update({ history: step.cursor, buffer: edit.bufferOf(step.text), dismissedText: step.text });
    };
    const send = (sent: edit.EditorBuffer) => {
      const text = expandChips(sent.text, pastes);
      if (text.trim() === "") return update({ buffer: sent });
      update({ buffer: edit.emptyBuffer, pastes: new Map(), history: historyPush(s.history, text) });
      props.onSubmit(text, sent.text, pastes);
    };
    if (command.type !== "interrupt") props.onActivity();
    switch (command.type) {
      case "insert":
        return setBuffer(edit.insertText(buffer, command.text));
      case "newline":
        return setBuffer(edit.insertText(buffer, "\n"));
      case "sequence":
        for (const each of command.commands) run(each);
        return;
      case "submit": {
        if (menu.chosen && menu.context && menu.chosen.value !== menu.context.query) {
          return acceptCompletion();
        }
        // A trailing backslash is the portable "new line" for terminals that send Enter for every chord.
        if (buffer.cursor === buffer.text.length && buffer.text.endsWith("\\")) {
          return setBuffer(edit.insertText(edit.deleteBackward(buffer), "\n"));
        }
        return send(buffer);
      }
      case "backspace":
        return setBuffer(edit.deleteBackward(buffer, chipEndingAt(buffer.text, buffer.cursor, pastes)?.length));
      case "delete":
        return setBuffer(edit.deleteForward(buffer));
      case "left":
        return setBuffer(edit.moveLeft(buffer));
      case "right":
        return setBuffer(edit.moveRight(buffer));
      case "word_left":
        return setBuffer(edit.moveWordLeft(buffer));
      case "word_right":
        return setBuffer(edit.moveWordRight(buffer));
      case "home":
        return setBuffer(edit.moveLineStart(buffer));
      case "end":
        return setBuffer(edit.moveLineEnd(buffer));
      case "up": {
        if (menu.open) return update({ selected: Math.max(0, s.selected - 1) });
        const moved = moveByRow(buffer.text, buffer.cursor, rowWidth(props.columns), -1, [...pastes.keys()]);
        return moved !== undefined ? setBuffer({ text: buffer.text, cursor: moved }) : browseHistory("up");
      }
      case "down": {
        if (menu.open) return update({ selected: Math.min(completion.items.length - 1, s.selected + 1) });
        const moved = moveByRow(buffer.text, buffer.cursor, rowWidth(props.columns), 1, [...pastes.keys()]);
        return moved !== undefined ? setBuffer({ text: buffer.text, cursor: moved }) : browseHistory("down");
      }
      case "kill_start":
        return setBuffer(edit.killToLineStart(buffer));
      case "kill_end":
        return setBuffer(edit.killToLineEnd(buffer));
      case "delete_word":
        return setBuffer(edit.deleteWordBackward(buffer));
      case "tab":
        return acceptCompletion();
      case "escape":
        if (menu.open) return update({ dismissedText: buffer.text });
        return props.onEscape();
      case "interrupt":
        if (!props.busy && buffer.text !== "") return update({ buffer: edit.emptyBuffer, pastes: new Map() });
        return props.onInterrupt();
      case "eof":
        if (buffer.text === "") return props.onEof();
        return setBuffer(edit.deleteForward(buffer));
      case "ignore":
        return;
    }
  };

  useInput(
    (input, key) => {
      const command = keyAction(input, key);
      // A sent message ends the typing; a draft being typed is what a prompt must not take keys from.
      if (command.type === "submit") noteTyping(Number.NEGATIVE_INFINITY);
      else noteTyping();
      run(command);
    },
    { isActive: props.active },
  );

  usePaste(
    (pasted) => {
      props.onActivity();
      const { buffer, pastes } = latest.current;
      const text = pasted.replace(/\r\n?/g, "\n");
      if (!shouldChip(text)) return update({ buffer: edit.insertText(buffer, text) });
      const chip = addChip(text, pastes);
      update({ pastes: chip.store, buffer: edit.insertText(buffer, chip.label) });
    },
    { isActive: props.pasteActive ?? props.active },
  );

  const menu = menuFor(state);
  return (
    <Box flexDirection="column">
      <Box ref={props.editorRef} flexDirection="column">
        <EditorView
          buffer={state.buffer}
          chips={[...state.pastes.keys()]}
          placeholder={PLACEHOLDER}
          focused={props.active}
          columns={props.columns}
          {...(props.maxRows !== undefined && { maxRows: props.maxRows })}
        />
      </Box>
      {menu.open && (
        <Box ref={props.menuRef} flexDirection="column">
          <CompletionMenu items={completion.items} selected={Math.min(state.selected, completion.items.length - 1)} {...(props.maxMenuRows !== undefined && { maxRows: props.maxMenuRows })} />
        </Box>
      )}
      {props.hint !== undefined && <Text>{theme.dim(props.hint)}</Text>}
    </Box>
  );
}
