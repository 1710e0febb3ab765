/**
 * The live frame (everything ink redraws below the finished transcript: the turn in progress, an
 * approval prompt, the input, the status line) is kept shorter than the screen.
 *
 * A frame as tall as the screen or taller makes ink clear the whole screen for every redraw, and
 * terminals that keep a cleared screen in their scrollback (tmux by default, several others) then
 * collect a stale copy of the frame per redraw; a taller frame also pushes its top rows there. Two
 * parts can grow without bound: the streaming block of the answer and the diff of an approval
 * prompt. They get the rows the rest of the frame leaves, measured after each render (ink's
 * `measureElement`): the frame's height minus theirs is what the rest takes, whatever the input
 * holds or how the status line wraps. Their "… N more line(s)" line is counted in. The input's
 * text gives way too: a long prompt (one line wraps to many rows) shows at most what the rest of
 * the frame leaves, and half of that beside a streaming block or a diff; the completion menu shows
 * the choices that leave the input one row.
 *
 * When even that leaves no row for the diff (a short terminal), the approval prompt's list of
 * answers turns compact: only the selected answer, in full, and one line of keys. It stays compact
 * until the prompt goes or the screen grows (the compact prompt, shorter, would otherwise argue for
 * the full list again); the full list's height is the one last measured.
 *
 *   const budget = useLiveFrameBudget(rows, { text: live.openText !== "", approval: approval !== undefined, diff: approval?.diff !== undefined });
 *   <Box ref={budget.frameRef}> … <LiveTurnView textRef={budget.textRef} maxTextLines={budget.maxTextLines} /> …
 */
import { measureElement, type DOMElement } from "ink";
import { useLayoutEffect, useRef, useState, type RefObject } from "react";
import { MAX_MENU_ROWS } from "./input/completion-menu.tsx";
import { MAX_EDITOR_ROWS } from "./input/editor-view.tsx";

/** What the rest of the frame (the input's text aside) is assumed to take until it has been measured once. */
const UNMEASURED_FIXED_ROWS = 9;
/** Rows the input's "… N line(s) above/below" lines may take besides its text. */
const EDITOR_MORE_ROWS = 2;
/** Rows the streaming block keeps while an approval prompt's diff is shown as well. */
const TEXT_ROWS_BESIDE_A_DIFF = 4;
/** The full list of answers' rows until it has been measured once (four answers, a detail, margins). */
const UNMEASURED_FULL_CHOICES_ROWS = 8;
/** An approval prompt's rows besides its answers and diff until measured: tool row, box, title. */
const UNMEASURED_PROMPT_ROWS = 6;
/** The compact list's rows until measured: the selected answer, its detail, the line of keys. */
const UNMEASURED_COMPACT_CHOICES_ROWS = 3;
/** Diff rows the full list must leave, or it turns compact: one line and its "… more" line. */
const MIN_DIFF_ROWS = 2;

export interface LiveFrameBudget {
  frameRef: RefObject<DOMElement | null>;
  textRef: RefObject<DOMElement | null>;
  diffRef: RefObject<DOMElement | null>;
  choicesRef: RefObject<DOMElement | null>;
  editorRef: RefObject<DOMElement | null>;
  menuRef: RefObject<DOMElement | null>;
  /** Rows of the input's text drawn at most (a long prompt scrolls around the cursor). */
  maxEditorRows: number;
  /** Choices of the completion menu shown at most. */
  maxMenuRows: number;
  /** The approval prompt shows only the selected answer and a line of keys. */
  compactChoices: boolean;
  /** Lines of the streaming block shown (older ones are summarised in one line). */
  maxTextLines: number;
  /** Lines of the approval prompt's diff shown (the rest summarised in one line). */
  maxDiffLines: number;
}

/** Rows for the parts that give way: the whole frame stays at most `rows - 1`. */
export function shrinkableRows(rows: number, fixedRows: number, parts: { text: boolean; diff: boolean }): { text: number; diff: number } {
  const available = Math.max(0, rows - 1 - fixedRows);
  const text = parts.text ? (parts.diff ? Math.min(TEXT_ROWS_BESIDE_A_DIFF, available) : available) : 0;
  const diff = parts.diff ? available - text : 0;
  return { text, diff };
}

/**
 * Rows of the input's text: what the rest of the frame leaves (half of it beside a streaming block
 * or a diff, which get the other half), less its "… more" lines; at least 1, at most MAX_EDITOR_ROWS.
 */
export function editorRows(rows: number, fixedRows: number, sharing: boolean): number {
  const available = Math.max(0, rows - 1 - fixedRows);
  const share = sharing ? Math.floor(available / 2) : available;
  return Math.max(1, Math.min(MAX_EDITOR_ROWS, share - EDITOR_MORE_ROWS));
}

/**
 * Choices of the completion menu: what the rest of the frame leaves (besides the menu itself)
 * after one row of the input's text and the menu's "N matches" line; at least 1, at most MAX_MENU_ROWS.
 */
export function menuRows(rows: number, fixedRowsWithoutMenu: number): number {
  return Math.max(1, Math.min(MAX_MENU_ROWS, rows - 1 - fixedRowsWithoutMenu - 1 - 1));
}

/** Whether the full list of answers leaves the diff too little room (or the frame none at all). */
export function needsCompactChoices(rows: number, otherRows: number, fullChoicesRows: number, diff: boolean): boolean {
  return otherRows + fullChoicesRows + (diff ? MIN_DIFF_ROWS : 0) > rows - 1;
}

export function useLiveFrameBudget(rows: number, parts: { text: boolean; approval: boolean; diff: boolean }): LiveFrameBudget {
  const frameRef = useRef<DOMElement | null>(null);
  const textRef = useRef<DOMElement | null>(null);
  const diffRef = useRef<DOMElement | null>(null);
  const choicesRef = useRef<DOMElement | null>(null);
  const editorRef = useRef<DOMElement | null>(null);
  const menuRef = useRef<DOMElement | null>(null);
  // What the last render measured: the rows of everything but the streaming block, the diff, the
  // list of answers and the input's text; the list's rows; the input's; whether an approval prompt was there.
  const [measured, setMeasured] = useState({ other: UNMEASURED_FIXED_ROWS, choices: 0, editor: 1, menu: 0, prompt: false });
  const fullChoicesRows = useRef(UNMEASURED_FULL_CHOICES_ROWS);
  // The rows at which the list turned compact. Compact stays until the prompt goes or the screen
  // grows: the compact prompt's own rows would otherwise argue for the full list again.
  const compactAt = useRef<number | undefined>(undefined);
  if (!parts.approval || (compactAt.current !== undefined && rows > compactAt.current)) compactAt.current = undefined;
  // A prompt not yet measured: its box, title and tool row are assumed.
  const fixed = measured.other + (parts.approval && !measured.prompt ? UNMEASURED_PROMPT_ROWS : 0);
  const other = fixed + measured.editor;
  if (parts.approval && compactAt.current === undefined && needsCompactChoices(rows, other, fullChoicesRows.current, parts.diff)) compactAt.current = rows;
  const compactChoices = compactAt.current !== undefined;
  // After every commit: ink has laid the tree out by then (its reconciler computes the layout
  // before layout effects run). Only a change re-renders.
  useLayoutEffect(() => {
    const frame = frameRef.current;
    if (!frame) return;
    const height = (ref: RefObject<DOMElement | null>) => (ref.current ? measureElement(ref.current).height : 0);
    const choices = height(choicesRef);
    const prompt = choicesRef.current !== null;
    if (prompt && !compactChoices) fullChoicesRows.current = choices;
    const editor = height(editorRef);
    const next = { other: measureElement(frame).height - height(textRef) - height(diffRef) - choices - editor, choices, editor, menu: height(menuRef), prompt };
    setMeasured((previous) =>
      previous.other === next.other && previous.choices === next.choices && previous.editor === next.editor && previous.menu === next.menu && previous.prompt === next.prompt ? previous : next,
    );
  });
  // Right after the prompt appears or changes form, its last measure is stale: count the larger
  // figure so that frame is never the one that overflows.
  const choices = !parts.approval ? 0 : compactChoices ? measured.choices || UNMEASURED_COMPACT_CHOICES_ROWS : Math.max(measured.choices, fullChoicesRows.current);
  const shares = shrinkableRows(rows, other + choices, parts);
  return {
    frameRef,
    textRef,
    diffRef,
    choicesRef,
    editorRef,
    menuRef,
    maxEditorRows: editorRows(rows, fixed + choices, parts.text || parts.diff),
    maxMenuRows: menuRows(rows, fixed + choices - measured.menu),
    compactChoices,
    // One row more kept free: the streaming block's top margin (after a tool row or a settled
    // paragraph) is not in the last measure on the render where the block appears, and that one
    // frame, a row too tall, made ink clear and redraw the screen (a ghost copy in the scrollback).
    maxTextLines: Math.max(0, shares.text - 2),
    maxDiffLines: Math.max(0, shares.diff - 1),
  };
}
