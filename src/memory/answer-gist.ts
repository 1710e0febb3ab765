/**
 * The form a long answer takes in the conversation window (ADR 0087): its opening and its close,
 * whole sentences (whole lines of code), with a marker between them saying how much was left out
 * and that `recall_turn` gives it back. The answer is new input when the next request sends it,
 * so what the window keeps of it is what the session pays for it uncached, once — and then as
 * cached rent on every request until its turn folds. The transcript keeps the answer whole.
 *
 * A pure function of the text, the cap and the turn number, so a window turn renders the same
 * bytes on every request (and after `chat --continue`) and the cached prefix holds.
 *
 *   answerGist(answer, 80, count, 12)
 *   // { text: "The cache keys on … .\n[… 214 more tokens: recall_turn 12]\nSo the fix is …", leftOut: 214 }
 */

/** An answer up to this many times the cap stays whole: cutting it would save too little to be worth the loss. */
export const GIST_WHOLE_FACTOR = 1.5;

/** The part of the cap kept for the close (where an answer states its conclusion or asks its question); it also gets what the opening leaves. */
const TAIL_SHARE = 1 / 3;

export interface AnswerGist {
  text: string;
  /** Tokens of the answer not in `text` (0 when whole). */
  leftOut: number;
}

interface Unit {
  start: number;
  end: number;
}

const FENCE = /^\s*(```|~~~)/;

/**
 * The answer cut into units that are kept or left out whole: a line of code (inside a fence) or
 * a fence line, else a sentence. Offsets into `text`; separators belong to no unit.
 */
function unitsOf(text: string): Array<Unit & { fenced: boolean }> {
  const units: Array<Unit & { fenced: boolean }> = [];
  let inFence = false;
  let lineStart = 0;
  while (lineStart <= text.length) {
    const newline = text.indexOf("\n", lineStart);
    const lineEnd = newline === -1 ? text.length : newline;
    const line = text.slice(lineStart, lineEnd);
    if (FENCE.test(line)) {
      units.push({ start: lineStart, end: lineEnd, fenced: true });
      inFence = !inFence;
    } else if (inFence) {
      units.push({ start: lineStart, end: lineEnd, fenced: true });
    } else if (line.trim() !== "") {
      // Sentences: a stop followed by space and what can start one.
      const sentence = /[.!?:;](?=\s+["'(`*\[]?[\p{Lu}\d])/gu;
      let from = lineStart;
      for (let m = sentence.exec(line); m; m = sentence.exec(line)) {
        const end = lineStart + m.index + 1;
        units.push({ start: from, end, fenced: false });
        from = end;
        while (from < lineEnd && /\s/.test(text[from] ?? "")) from++;
      }
      if (from < lineEnd) units.push({ start: from, end: lineEnd, fenced: false });
    }
    if (newline === -1) break;
    lineStart = newline + 1;
  }
  return units;
}

/** Whether `text` up to `at` leaves a code fence open. */
function openFence(text: string, at: number): string | undefined {
  let open: string | undefined;
  for (const line of text.slice(0, at).split("\n")) {
    if (FENCE.test(line)) open = open === undefined ? line.trim() : undefined;
  }
  return open;
}

/** `text` cut to about `tokens` tokens at a word boundary, from its start (or its end, `fromEnd`). */
function cutWords(text: string, tokens: number, count: (text: string) => number, fromEnd: boolean): string {
  if (tokens <= 0) return "";
  const perToken = text.length / Math.max(1, count(text));
  let chars = Math.floor(tokens * perToken);
  for (let attempt = 0; attempt < 6 && chars > 0; attempt++) {
    let piece = fromEnd ? text.slice(text.length - chars) : text.slice(0, chars);
    const space = fromEnd ? piece.indexOf(" ") : piece.lastIndexOf(" ");
    if (space > 0 && space < piece.length - 1) piece = fromEnd ? piece.slice(space + 1) : piece.slice(0, space);
    if (count(piece) <= tokens) return piece;
    chars = Math.floor(chars * 0.8);
  }
  return "";
}

export function answerGist(text: string, maxTokens: number, count: (text: string) => number, turn: number): AnswerGist {
  if (maxTokens <= 0) return { text, leftOut: 0 };
  const total = count(text);
  if (total <= maxTokens * GIST_WHOLE_FACTOR) return { text, leftOut: 0 };
  const units = unitsOf(text);
  const unitTokens = units.map((unit) => count(text.slice(unit.start, unit.end)));
  const markerTokens = count(marker(total, turn));
  let budget = maxTokens;
  // Each attempt shrinks the room by 15% until the gist fits; the sixth is taken as it is.
  for (let attempt = 0; ; attempt++) {
    const room = Math.max(0, budget - markerTokens);
    const headRoom = room - Math.floor(room * TAIL_SHARE);
    // The opening: whole units while they fit; a first unit too long is cut at a word.
    let headEnd = 0;
    let used = 0;
    let headIndex = 0;
    for (; headIndex < units.length; headIndex++) {
      const tokens = unitTokens[headIndex] ?? 0;
      if (used + tokens > headRoom) break;
      used += tokens;
      headEnd = (units[headIndex] as Unit).end;
    }
    let head = text.slice(0, headEnd);
    if (headEnd === 0) head = cutWords(text.slice(0, units[0]?.end ?? text.length), headRoom, count, false);
    // The close gets its third and whatever the opening's whole units left of theirs.
    const headTokens = count(head);
    const tailRoom = room - headTokens;
    // The close: whole units from the end while they fit, never reaching into the opening.
    let tailStart = text.length;
    let tailUsed = 0;
    for (let i = units.length - 1; i >= headIndex; i--) {
      const tokens = unitTokens[i] ?? 0;
      if (tailUsed + tokens > tailRoom) break;
      tailUsed += tokens;
      tailStart = (units[i] as Unit).start;
    }
    let tail = text.slice(tailStart);
    if (tailStart === text.length) {
      const last = units.at(-1);
      tail = last && units.length - 1 >= headIndex ? cutWords(text.slice(last.start, last.end), tailRoom, count, true) : "";
    }
    const headOpen = openFence(text, head.length);
    const tailFrom = tail === "" ? text.length : text.length - tail.length;
    const tailOpen = openFence(text, tailFrom);
    const closedHead = headOpen !== undefined ? `${head.replace(/\s+$/, "")}\n${headOpen.startsWith("~") ? "~~~" : "```"}` : head.replace(/\s+$/, "");
    const openedTail = tailOpen !== undefined && tail !== "" ? `${tailOpen}\n${tail.replace(/^\s+/, "")}` : tail.replace(/^\s+/, "");
    const keptTokens = headTokens + count(tail);
    const leftOut = Math.max(1, total - keptTokens);
    const candidate = [closedHead, marker(leftOut, turn), openedTail].filter((part) => part !== "").join("\n");
    if (count(candidate) <= maxTokens || attempt === 5) return { text: candidate, leftOut };
    budget = Math.floor(budget * 0.85);
  }
}

function marker(leftOut: number, turn: number): string {
  return `[… ${leftOut} more tokens: recall_turn ${turn}]`;
}
