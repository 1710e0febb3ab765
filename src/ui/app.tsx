/**
 * The REPL layout: finished items in <Static> (the terminal's own scrollback), the live turn,
 * any prompt that owns the keyboard (approval, session picker), the input editor and the status
 * line. It only renders what the controller reports and forwards what the user asks for.
 */
import { mergeChips, type PasteStore } from "./input/paste-chips.ts";
import { Box, Static, Text, useApp, useWindowSize } from "ink";
import { useCallback, useEffect, useMemo, useReducer, useRef, useState } from "react";
import { findSlashCommand, helpOutput, type ChatController, type EarlierConversation, type SessionListing, type StatusSnapshot } from "../agent/front-end-contract.ts";
import type { ApprovalDecision } from "../agent/events.ts";
import { describeError } from "../errors.ts";
import { ApprovalPrompt } from "./approval/approval-prompt.tsx";
import { PromptInput } from "./input/prompt-input.tsx";
import { PICKER_OTHER_ROWS, resumableSessions, SessionPicker } from "./sessions/session-picker.tsx";
import { parseSlash } from "./slash/parse-slash.ts";
import { useCommandRunner } from "./slash/use-command-runner.ts";
import { StatusLine } from "./status/status-line.tsx";
import { terminalSafe } from "./terminal-safe-text.ts";
import { useTheme } from "./theme-context.tsx";
import { initialReplState, replReducer, type ReplState } from "./transcript/repl-reducer.ts";
import { TranscriptItemView } from "./transcript/transcript-item-view.tsx";
import type { NewItem } from "./transcript/transcript-items.ts";
import { LiveTurnView } from "./turn/live-turn-view.tsx";
import { useTurnRunner } from "./turn/use-turn-runner.ts";
import { useResizeRefresh } from "./use-resize-refresh.ts";
import { useLiveFrameBudget } from "./live-frame-budget.ts";
import { leftOutNotice, reprintWindow } from "./transcript/reprint-window.ts";
import { earlierItems } from "./transcript/earlier-items.ts";
import { noteTyping } from "./input/typing-clock.ts";

export interface AppProps {
  controller: ChatController;
  /** Sent as the first message once the app is up (`valarmind chat "..."`). */
  initialPrompt?: string;
  /** Milliseconds text deltas are gathered per render; 0 renders each delta (tests). */
  frameMs?: number;
  /** Called once when the user leaves (after ink's own exit). */
  onExit?: () => void;
}

function startupState(status: StatusSnapshot, earlier: EarlierConversation | undefined, width: number): ReplState {
  const items: NewItem[] = [
    { kind: "banner", model: status.model, sessionId: status.sessionId },
    ...status.warnings.map((text): NewItem => ({ kind: "notice", tone: "warning", text })),
    // A resumed session shows what was said before, as it was shown live.
    ...(earlier === undefined ? [] : earlierItems(earlier, status.sessionId, width)),
  ];
  return items.reduce((state, item) => replReducer(state, { type: "append", item }), initialReplState);
}

export function App({ controller, initialPrompt, frameMs = 16, onExit }: AppProps) {
  const theme = useTheme();
  const { exit } = useApp();
  const { columns, rows } = useWindowSize();
  const staticKey = useResizeRefresh();
  const [status, setStatus] = useState<StatusSnapshot>(() => controller.status());
  const [state, dispatch] = useReducer(replReducer, status, (first: StatusSnapshot) => startupState(first, controller.earlierConversation?.(), Math.max(20, columns - 2)));
  const [history, setHistory] = useState<readonly string[]>([]);
  const [queue, setQueue] = useState<Array<{ text: string; display: string; pastes: PasteStore }>>([]);
  // Read by an interrupt between renders: the messages it gives back to the editor.
  const queueRef = useRef(queue);
  queueRef.current = queue;
  const [restore, setRestore] = useState<{ text: string; pastes: PasteStore; seq: number } | undefined>(undefined);
  // A render of the app alone re-measures the live frame (the approval prompt changing its own height).
  const [, remeasure] = useReducer((n: number) => n + 1, 0);
  const [exitArmed, setExitArmed] = useState(false);
  const [picker, setPicker] = useState<SessionListing[] | undefined>(undefined);
  const shownWarnings = useRef(new Set(status.warnings));
  const catalog = useMemo(() => controller.commands(), [controller]);
  const width = Math.max(20, columns - 2);
  // After a resize only the newest items are printed again (./transcript/reprint-window.ts),
  // chosen once, when the redraw starts; items finished later follow them.
  const reprint = useMemo(() => (staticKey === 0 ? undefined : reprintWindow(state.items)), [staticKey]);
  const staticItems = useMemo(() => {
    if (!reprint || (reprint.leftOut === 0 && reprint.cutLines === 0)) return state.items;
    // The window as chosen, then whatever finished since.
    return [leftOutNotice(`left-out-${staticKey}`, reprint, status.sessionId), ...reprint.items, ...state.items.slice(reprint.through)];
  }, [state.items, reprint]);

  const notify = useCallback((tone: "warning" | "error", text: string, hint?: string) => {
    dispatch({ type: "append", item: { kind: "notice", tone, text, ...(hint === undefined ? {} : { hint }) } });
  }, []);

  const refreshStatus = useCallback(() => setStatus(controller.status()), [controller]);
  // The session shown: a command that switched it (/resume, /clear) prints the new one's earlier turns.
  const shownSession = useRef(status.sessionId);
  const columnsRef = useRef(columns);
  columnsRef.current = columns;
  const afterWork = useCallback(() => {
    const next = controller.status();
    setStatus(next);
    if (next.sessionId !== shownSession.current) {
      shownSession.current = next.sessionId;
      const earlier = controller.earlierConversation?.();
      for (const item of earlier === undefined ? [] : earlierItems(earlier, next.sessionId, Math.max(20, columnsRef.current - 2))) dispatch({ type: "append", item });
    }
    for (const warning of next.warnings) {
      if (shownWarnings.current.has(warning)) continue;
      shownWarnings.current.add(warning);
      notify("warning", warning);
    }
  }, [controller, notify]);

  const turn = useTurnRunner(controller, dispatch, frameMs, refreshStatus, afterWork);
  const command = useCommandRunner(controller, dispatch, catalog, afterWork);
  const busy = turn.running || command.running !== undefined;

  const leave = useCallback(() => {
    const live = turn.isRunning();
    // The scrollback says how the turn ended ("[aborted]", no "working" line left behind): closed
    // first, and the app exits after that render.
    if (live) dispatch({ type: "turn_closed", stopReason: "aborted" });
    turn.abort();
    // A command waiting on the model (/compact) would hold the process until it answered.
    command.abort();
    onExit?.();
    if (live) setTimeout(exit, 0);
    else exit();
  }, [turn, command, exit, onExit, dispatch]);

  const approval = state.live?.approval;
  // The approval's deny note takes pastes while it is open; otherwise they go to the message editor.
  const [noteOpen, setNoteOpen] = useState(false);
  useEffect(() => setNoteOpen(false), [approval?.callId]);
  const budget = useLiveFrameBudget(rows, { text: (state.live?.openText ?? "").trim() !== "", approval: approval !== undefined, diff: approval?.diff !== undefined || approval?.command !== undefined });
  const answerApproval = useCallback(
    (decision: ApprovalDecision) => {
      if (!approval) return;
      dispatch({ type: "approval_answered", callId: approval.callId, decision });
      controller.answer(approval.id, decision);
    },
    [approval, controller],
  );

  // Messages queued behind a turn or a command are not sent after the user stopped it, maybe to
  // say something else: they go back to the editor, to send, change or drop.
  const giveBackQueue = useCallback(() => {
    const queued = queueRef.current;
    if (queued.length === 0) return;
    queueRef.current = [];
    setQueue([]);
    // As they showed in the editor: a paste comes back as its chip, not as its lines.
    let back: { text: string; store: PasteStore } = { text: "", store: new Map() };
    for (const item of queued) {
      const merged = mergeChips(item.display, item.pastes, back.store);
      back = { text: back.text === "" ? merged.text : `${back.text}\n\n${merged.text}`, store: merged.store };
    }
    setRestore((previous) => ({ text: back.text, pastes: back.store, seq: (previous?.seq ?? 0) + 1 }));
  }, []);

  const interruptTurn = useCallback(() => {
    // The core is waiting on the approval; answer it so the turn can wind down.
    if (approval) answerApproval({ kind: "deny", note: "The user interrupted the turn." });
    giveBackQueue();
    turn.abort();
  }, [approval, answerApproval, turn, giveBackQueue]);

  /** Cancels a slash command waiting on the model (/compact); the queue comes back as for a turn. */
  const cancelCommand = useCallback((): boolean => {
    if (!command.abort()) return false;
    giveBackQueue();
    return true;
  }, [command, giveBackQueue]);

  const dispatchInput = useCallback(
    (text: string, display: string) => {
      const slash = parseSlash(text);
      if (!slash) return turn.start(text, display);
      const entry = findSlashCommand(catalog, slash.name);
      // A custom command is a message: the core's submit sends its expanded text.
      if (entry?.runs === "prompt") return turn.start(text, display);
      const name = entry?.name ?? slash.name;
      const line = display.trim();
      if (name === "resume" && slash.args === "") {
        controller.listSessions().then(
          (listings) => {
            const sessions = resumableSessions(listings, controller.status().sessionId);
            if (sessions.length > 0) setPicker(sessions);
            else notify("warning", "No earlier sessions in this repository.");
          },
          (error: unknown) =>
            notify("error", `Could not list sessions: ${describeError(error)}`),
        );
        return;
      }
      command.run(name, slash.args, line);
    },
    [turn, command, controller, notify, catalog],
  );

  const submit = useCallback(
    (text: string, display: string, pastes: PasteStore = new Map()) => {
      // A sent message ends the typing (however its keys arrived): the next prompt's keys are answers.
      noteTyping(Number.NEGATIVE_INFINITY);
      controller
        .appendHistory?.(text)
        .catch((error: unknown) =>
          notify(
            "warning",
            `Could not save the prompt history: ${describeError(error)}`,
          ),
        );
      const slash = parseSlash(text);
      // The front end's own commands (`runs: "ui"` in the catalogue) are answered here.
      const name = slash ? findSlashCommand(catalog, slash.name)?.name : undefined;
      if (name === "exit") return leave();
      if (name === "help") {
        dispatch({ type: "append", item: { kind: "command", command: display.trim(), output: helpOutput(catalog) } });
        return;
      }
      if (turn.isRunning() || command.isRunning()) {
        setQueue((items) => [...items, { text, display, pastes }]);
        return;
      }
      dispatchInput(text, display);
    },
    [controller, notify, leave, catalog, turn, command, dispatchInput],
  );

  useEffect(() => {
    if (busy || queue.length === 0) return;
    const [next, ...rest] = queue;
    setQueue(rest);
    if (next) dispatchInput(next.text, next.display);
  }, [busy, queue, dispatchInput]);

  useEffect(() => {
    controller
      .loadHistory?.()
      .then(setHistory, (error: unknown) =>
        notify(
          "warning",
          `Could not load the prompt history: ${describeError(error)}`,
        ),
      );
    if (initialPrompt !== undefined && initialPrompt.trim() !== "") submit(initialPrompt, initialPrompt);
    // Once at startup: a later render must not resend the first prompt.
  }, []);

  const completePath = useCallback((prefix: string) => controller.completePath(prefix), [controller]);
  const onCompletionError = useCallback((message: string) => notify("warning", message), [notify]);

  // A ref as well as state: two Ctrl+C can arrive in one read, before a re-render.
  const exitArmedRef = useRef(false);
  const armExit = useCallback((armed: boolean) => {
    if (exitArmedRef.current === armed) return;
    exitArmedRef.current = armed;
    setExitArmed(armed);
  }, []);
  const onInterrupt = useCallback(() => {
    if (turn.running) return interruptTurn();
    if (cancelCommand()) return;
    if (busy) return;
    if (exitArmedRef.current) return leave();
    armExit(true);
  }, [turn.running, interruptTurn, cancelCommand, busy, leave, armExit]);

  const hint = exitArmed
    ? "Press Ctrl+C again to exit"
    : queue.length > 0
      ? `${queue.length} message(s) queued; sent when the current ${turn.running ? "turn" : "command"} ends (${approval ? "Ctrl+C" : "Esc"} stops it and brings them back here)`
      : undefined;

  return (
    <Box ref={budget.frameRef} flexDirection="column">
      <Static key={staticKey} items={staticItems}>{(item) => <TranscriptItemView key={item.id} item={item} width={width} />}</Static>
      {state.live && <LiveTurnView live={state.live} width={width} maxTextLines={budget.maxTextLines} textRef={budget.textRef} />}
      {command.running !== undefined && <Text>{theme.dim(`running ${terminalSafe(command.running)} …`)}</Text>}
      {approval && (
        <ApprovalPrompt
          key={approval.callId}
          approval={approval}
          maxDiffLines={budget.maxDiffLines}
          diffRef={budget.diffRef}
          choicesRef={budget.choicesRef}
          compact={budget.compactChoices}
          onAnswer={answerApproval}
          onInterrupt={interruptTurn}
          onNoteOpen={setNoteOpen}
          onLayoutChange={remeasure}
        />
      )}
      {picker && (
        <SessionPicker
          sessions={picker}
          maxRows={rows - PICKER_OTHER_ROWS}
          onCancel={() => setPicker(undefined)}
          onChoose={(session) => {
            setPicker(undefined);
            command.run("resume", session.id, `/resume ${session.id}`);
          }}
        />
      )}
      <Box marginTop={1}>
        <PromptInput
          active={!approval && !picker}
          pasteActive={!picker && !(approval && noteOpen)}
          busy={turn.running}
          history={history}
          commands={catalog}
          completePath={completePath}
          onSubmit={submit}
          onInterrupt={onInterrupt}
          onEscape={() => (turn.running ? interruptTurn() : void cancelCommand())}
          onEof={leave}
          onActivity={() => armExit(false)}
          onError={onCompletionError}
          hint={hint}
          columns={columns}
          maxRows={budget.maxEditorRows}
          editorRef={budget.editorRef}
          maxMenuRows={budget.maxMenuRows}
          menuRef={budget.menuRef}
          {...(restore === undefined ? {} : { restore })}
        />
      </Box>
      <StatusLine status={status} />
    </Box>
  );
}
