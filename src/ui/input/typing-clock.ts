/**
 * When the user last typed into the editor: a prompt that takes the keyboard while they are
 * typing (an approval appearing mid-word) must not take their next letters as its answers.
 *
 *   noteTyping();                 // the editor, on every key
 *   msSinceTyping()               // the approval prompt, when it appears
 */
let lastTypedAt = Number.NEGATIVE_INFINITY;

export function noteTyping(now: number = performance.now()): void {
  lastTypedAt = now;
}

export function msSinceTyping(now: number = performance.now()): number {
  return now - lastTypedAt;
}

/** Typed this recently before a prompt appeared, the user was still typing their message. */
export const STILL_TYPING_MS = 1000;
/** A gap this long in the keys ends the typing that ran into a prompt: the next key is an answer. */
export const TYPING_GAP_MS = 400;
