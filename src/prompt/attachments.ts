/**
 * `@path` in a user message (ADR 0079): which words are references, how an attached file, listing
 * or image reads inside the message, and how the current turn's message splits into manifest
 * items. Pure; attachment-files.ts reads the files.
 *
 * An attachment is expanded into the message text itself, as a tagged data block after the user's
 * words and a note (`<attachment path="src/a.ts" bytes="812">…</attachment>`), so the transcript,
 * the window (a turn keeps the form it entered with, ADR 0074), the summary and `prompt --dry-run`
 * all carry the same text, and request n+1 repeats request n's message byte for byte.
 *
 *   findAttachmentRefs("fix @src/a.ts, mail me@x.org")   // [{ path: "src/a.ts", … }]; the address is no reference
 *   withAttachments("fix @src/a.ts", [fileBlock(…)])     // the message as it is recorded and sent
 *   splitMessage(recorded)                               // [{ text: "fix …note…\n" }, { path: "src/a.ts", text: "<attachment …" }]
 */
import { promptText } from "./prompt-text.ts";
import { tagged } from "./section.ts";

/** A text file over this is attached as its head and tail (ADR 0079: 32 KiB is ~8k tokens, a third of the default budget). */
export const ATTACHMENT_MAX_BYTES = 32 * 1024;
/** Files over this are not attached at all, not even in part: they are read with read_file, grep or a command. */
export const ATTACHMENT_READ_MAX_BYTES = 4 * 1024 * 1024;
/** At most this many files are listed for `@dir/`. */
export const LISTING_MAX_FILES = 200;
/** Attachment text of one message beyond this is not attached (the next references are left as text). */
export const ATTACHMENTS_TOTAL_MAX_BYTES = 128 * 1024;

export interface AttachmentRef {
  /** The reference as typed: `@src/a.ts`, `@"my notes.md"`. */
  token: string;
  /** The path it names (quotes and trailing sentence punctuation removed). */
  path: string;
}

// Data blocks valarmind put in the message (piped standard input, earlier attachments): an `@`
// inside them is data, not the user's reference.
const DATA_BLOCK = /<(piped_input|attachment)\b[\s\S]*?<\/\1>/g;
// `@` at the start or after a space or an opening bracket or quote (never inside a word, so
// `me@example.org` is not one), then a quoted path or a run of path characters.
// Brackets may be inside a path (Next.js `(auth)/`, SvelteKit `[slug]/`); an unbalanced closer at
// its end is the sentence's: "(see @src/a.ts)" names src/a.ts.
const REF = /(?<=^|[\s([{"'`])@(?:"([^"\n]+)"|([^\s"'`<>|;,]+))/g;

const PAIRS: Record<string, string> = { ")": "(", "]": "[", "}": "{" };

/** `path` without the sentence's punctuation and unbalanced closing brackets at its end. */
function trimmedPath(path: string): string {
  let out = path;
  for (;;) {
    const last = out.at(-1) ?? "";
    const open = PAIRS[last];
    if (/[.,:;!?]/.test(last)) out = out.slice(0, -1);
    else if (open !== undefined && out.split(last).length > out.split(open).length) out = out.slice(0, -1);
    else return out;
  }
}

/** The `@path` references in the user's words, in order, each path once. */
export function findAttachmentRefs(text: string): AttachmentRef[] {
  const words = text.replace(DATA_BLOCK, (block) => " ".repeat(block.length));
  const refs: AttachmentRef[] = [];
  const seen = new Set<string>();
  for (const match of words.matchAll(REF)) {
    const quoted = match[1];
    // A sentence may end right after a path: "look at @src/a.ts." names src/a.ts.
    const path = quoted ?? trimmedPath(match[2] ?? "");
    if (path === "" || path === "/" || seen.has(path)) continue;
    seen.add(path);
    refs.push({ token: quoted !== undefined ? `@"${quoted}"` : `@${path}`, path });
  }
  return refs;
}

/** A text file's block; `shown` says when only its head and tail are in it. */
export function fileBlock(path: string, body: string, bytes: number, shown?: "head+tail"): string {
  return tagged("attachment", body, { path, bytes, shown });
}

/** `@dir/`: the files under it (git's view: ignored files left out), bounded. */
export function listingBlock(path: string, files: readonly string[], more: boolean): string {
  const dir = path.endsWith("/") ? path : `${path}/`;
  const body = files.length === 0 ? "(no files)" : files.join("\n");
  const tail = more ? `\n[listing stopped at ${LISTING_MAX_FILES} files; more are under ${dir}: list_files or grep it]` : "";
  return tagged("attachment", `${body}${tail}`, { path: dir, kind: "directory", files: more ? `${files.length}+` : files.length });
}

/** An image's place in the text: the image itself travels beside the message, with this turn only. */
export function imageBlock(path: string, type: string, bytes: number): string {
  const body = `[the image is attached to this message as an input image; it is sent with this message only, so later requests see this note instead: attach it again (@${path}) to look at it again]`;
  return tagged("attachment", body, { path, kind: "image", type, bytes });
}

/** The message as recorded and sent: the user's words, the note, then each block. */
export function withAttachments(message: string, blocks: readonly string[]): string {
  if (blocks.length === 0) return message;
  return `${message.trimEnd()}\n\n${promptText("attachment-note")}\n${blocks.join("")}`.trimEnd();
}

export interface MessagePart {
  text: string;
  /** Set for an attachment block: the path it names. */
  path?: string;
}

const BLOCK = /<attachment\b[^>\n]*\bpath="([^"\n]*)"[^>\n]*>\n[\s\S]*?\n<\/attachment>\n?/g;

/**
 * The message in parts that join back to it exactly: the user's words (with the note) and each
 * attachment block, each block starting with `<` after a line end (a token boundary, so the parts'
 * token counts add up to the whole). A message without blocks is one part.
 */
export function splitMessage(text: string): MessagePart[] {
  const parts: MessagePart[] = [];
  let at = 0;
  for (const match of text.matchAll(BLOCK)) {
    const start = match.index;
    if (start > at) parts.push({ text: text.slice(at, start) });
    parts.push({ text: match[0], path: (match[1] ?? "").replaceAll("&quot;", '"') });
    at = start + match[0].length;
  }
  if (at < text.length) parts.push({ text: text.slice(at) });
  return parts;
}
