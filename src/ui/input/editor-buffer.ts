/**
 * The input editor's text and cursor as immutable values. Every edit is a pure function, so the
 * key handling can be tested without a terminal. The cursor is a UTF-16 offset into `text`.
 */
export interface EditorBuffer {
  readonly text: string;
  readonly cursor: number;
}

export const emptyBuffer: EditorBuffer = { text: "", cursor: 0 };

export function bufferOf(text: string): EditorBuffer {
  return { text, cursor: text.length };
}

export function insertText(buffer: EditorBuffer, inserted: string): EditorBuffer {
  const { text, cursor } = buffer;
  return { text: text.slice(0, cursor) + inserted + text.slice(cursor), cursor: cursor + inserted.length };
}

/** Length of the code point ending at `index` (1, or 2 for a surrogate pair). */
function pointBefore(text: string, index: number): number {
  const low = text.charCodeAt(index - 1);
  const high = text.charCodeAt(index - 2);
  return low >= 0xdc00 && low <= 0xdfff && high >= 0xd800 && high <= 0xdbff ? 2 : 1;
}

function pointAt(text: string, index: number): number {
  const code = text.codePointAt(index);
  return code !== undefined && code > 0xffff ? 2 : 1;
}

export function deleteBackward(buffer: EditorBuffer, span?: number): EditorBuffer {
  const { text, cursor } = buffer;
  if (cursor === 0) return buffer;
  const size = span ?? pointBefore(text, cursor);
  return { text: text.slice(0, cursor - size) + text.slice(cursor), cursor: cursor - size };
}

export function deleteForward(buffer: EditorBuffer): EditorBuffer {
  const { text, cursor } = buffer;
  if (cursor >= text.length) return buffer;
  return { text: text.slice(0, cursor) + text.slice(cursor + pointAt(text, cursor)), cursor };
}

export function moveLeft(buffer: EditorBuffer): EditorBuffer {
  return buffer.cursor === 0 ? buffer : { ...buffer, cursor: buffer.cursor - pointBefore(buffer.text, buffer.cursor) };
}

export function moveRight(buffer: EditorBuffer): EditorBuffer {
  return buffer.cursor >= buffer.text.length
    ? buffer
    : { ...buffer, cursor: buffer.cursor + pointAt(buffer.text, buffer.cursor) };
}

function lineStart(text: string, cursor: number): number {
  return text.lastIndexOf("\n", cursor - 1) + 1;
}

function lineEnd(text: string, cursor: number): number {
  const end = text.indexOf("\n", cursor);
  return end === -1 ? text.length : end;
}

export function moveLineStart(buffer: EditorBuffer): EditorBuffer {
  return { ...buffer, cursor: lineStart(buffer.text, buffer.cursor) };
}

export function moveLineEnd(buffer: EditorBuffer): EditorBuffer {
  return { ...buffer, cursor: lineEnd(buffer.text, buffer.cursor) };
}

export function killToLineStart(buffer: EditorBuffer): EditorBuffer {
  const start = lineStart(buffer.text, buffer.cursor);
  return { text: buffer.text.slice(0, start) + buffer.text.slice(buffer.cursor), cursor: start };
}

export function killToLineEnd(buffer: EditorBuffer): EditorBuffer {
  const end = lineEnd(buffer.text, buffer.cursor);
  return { text: buffer.text.slice(0, buffer.cursor) + buffer.text.slice(end), cursor: buffer.cursor };
}

/** Deletes the word before the cursor (and the spaces after it), like a shell's Ctrl+W. */
export function deleteWordBackward(buffer: EditorBuffer): EditorBuffer {
  const before = buffer.text.slice(0, buffer.cursor);
  const match = /\S*\s*$/.exec(before);
  const size = match ? match[0].length : 0;
  return size === 0 ? deleteBackward(buffer) : deleteBackward(buffer, size);
}

/** To the start of the word before the cursor (over the spaces before it), like readline's Alt+B. */
export function moveWordLeft(buffer: EditorBuffer): EditorBuffer {
  const match = /\S*\s*$/.exec(buffer.text.slice(0, buffer.cursor));
  return { text: buffer.text, cursor: buffer.cursor - (match?.[0].length ?? 0) };
}

/** To the end of the word after the cursor (over the spaces before it), like readline's Alt+F. */
export function moveWordRight(buffer: EditorBuffer): EditorBuffer {
  const match = /^\s*\S*/.exec(buffer.text.slice(buffer.cursor));
  return { text: buffer.text, cursor: buffer.cursor + (match?.[0].length ?? 0) };
}
