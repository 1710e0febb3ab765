/**
 * Reads what a message's `@path` references name and expands them into the message (ADR 0079):
 * a text file as a data block (over ATTACHMENT_MAX_BYTES: its head and tail, with a note), a
 * directory as a bounded listing, an image (png, jpeg, gif, webp) as an input image beside the
 * message plus a note in its text. Every read is confined to the workspace like read_file's (no
 * symlink out, no FIFO or device, no file with several hard links); a reference that names
 * nothing, or a file that cannot be attached, stays in the message as typed and is told in a
 * notice. Paths are taken relative to the current directory, then to the workspace root.
 *
 *   const expanded = await expandAttachments("why does @src/app.ts fail?", { root, cwd });
 *   expanded.text      // the message as it is recorded and sent
 *   expanded.images    // images for this turn's requests
 *   expanded.notices   // what was not attached, or attached in part, and why
 */
import { realpathSync } from "node:fs";
import { stat } from "node:fs/promises";
import { extname, relative, resolve } from "node:path";
import { describeError } from "../errors.ts";
import { confinePath, PathEscapeError } from "../tools/confine.ts";
import { readConfined } from "../tools/confined-file.ts";
import { walkFiles } from "../tools/file-walk.ts";
import { asUtf8, looksBinary } from "../tools/read-file.ts";
import { shownName } from "../tools/list-files.ts";
import {
  ATTACHMENT_MAX_BYTES,
  ATTACHMENT_READ_MAX_BYTES,
  ATTACHMENTS_TOTAL_MAX_BYTES,
  fileBlock,
  findAttachmentRefs,
  imageBlock,
  LISTING_MAX_FILES,
  listingBlock,
  withAttachments,
  type AttachmentRef,
} from "./attachments.ts";
import { IMAGE_EXTENSIONS, IMAGE_MAX_BYTES, imageDataUrl, sniffImageType } from "./images.ts";
import type { AttachedImage } from "./section.ts";

export type AttachmentNoticeCode = "attachment_not_attached" | "attachment_shortened";

export interface AttachmentNotice {
  message: string;
  code: AttachmentNoticeCode;
}

export interface ExpandedMessage {
  text: string;
  images: AttachedImage[];
  notices: AttachmentNotice[];
  /** Workspace-relative paths attached (files, directories, images), in order. */
  attached: string[];
}

export interface ExpandOptions {
  root: string;
  /** Where relative references are resolved first (default: the process's current directory). */
  cwd?: string;
  /** Images given outside the message (`chat -p --image`), already read and checked: noted in the text and sent like `@` ones. */
  images?: readonly ImageFileAttachment[];
}

/** An image read from disk, ready to send. */
export interface ImageFileAttachment {
  path: string;
  type: string;
  bytes: number;
  image: AttachedImage["image"];
}

type Resolved = { ok: true; abs: string; rel: string; isDir: boolean } | { ok: false; problem: string };

async function resolveRef(rootReal: string, cwd: string, ref: AttachmentRef): Promise<Resolved | undefined> {
  const candidates = [...new Set([resolve(cwd, ref.path), resolve(rootReal, ref.path)])];
  let escaped: string | undefined;
  for (const candidate of candidates) {
    let confined: { abs: string; rel: string };
    try {
      confined = confinePath(rootReal, candidate);
    } catch (error) {
      if (!(error instanceof PathEscapeError)) throw error;
      escaped ??= error.message.replace(`path '${candidate}'`, `'${ref.path}'`);
      continue;
    }
    try {
      const info = await stat(confined.abs);
      return { ok: true, abs: confined.abs, rel: confined.rel, isDir: info.isDirectory() };
    } catch {
      // Not there: the next candidate, or "no such file".
    }
  }
  return escaped !== undefined ? { ok: false, problem: escaped } : undefined;
}

/** The head and tail of a long text file, cut at line ends, with a marker saying what is left out. */
function headAndTail(bytes: Buffer, rel: string): string {
  const headBytes = Math.floor((ATTACHMENT_MAX_BYTES * 2) / 3);
  const tailBytes = ATTACHMENT_MAX_BYTES - headBytes;
  let head = bytes.subarray(0, headBytes).toString("utf8");
  let tail = bytes.subarray(bytes.length - tailBytes).toString("utf8");
  const headCut = head.lastIndexOf("\n");
  if (headCut > head.length * 0.8) head = head.slice(0, headCut + 1);
  const tailCut = tail.indexOf("\n");
  if (tailCut !== -1 && tailCut < tail.length * 0.2) tail = tail.slice(tailCut + 1);
  const omittedBytes = bytes.length - Buffer.byteLength(head) - Buffer.byteLength(tail);
  const omittedLines = bytes.subarray(Buffer.byteLength(head), bytes.length - Buffer.byteLength(tail)).toString("utf8").split("\n").length - 1;
  const marker = `[… ${omittedLines} lines, ${omittedBytes} bytes omitted: the file is ${bytes.length} bytes, over the ${ATTACHMENT_MAX_BYTES}-byte attachment cap; read_file ${rel} for the middle …]`;
  return `${head.endsWith("\n") ? head : `${head}\n`}${marker}\n${tail}`;
}

async function listing(rootReal: string, abs: string): Promise<{ files: string[]; more: boolean }> {
  const files: string[] = [];
  for await (const entry of walkFiles(rootReal, abs)) {
    if (files.length === LISTING_MAX_FILES) return { files, more: true };
    // A name with a newline would read as two files: quoted, like list_files shows it.
    files.push(shownName(entry.rel));
  }
  return { files, more: false };
}

function isImagePath(path: string): boolean {
  return extname(path).slice(1).toLowerCase() in IMAGE_EXTENSIONS;
}

export async function expandAttachments(text: string, options: ExpandOptions): Promise<ExpandedMessage> {
  const rootReal = realpathSync(options.root);
  const cwd = options.cwd ?? process.cwd();
  const blocks: string[] = [];
  const images: AttachedImage[] = [];
  const notices: AttachmentNotice[] = [];
  const attached: string[] = [];
  const missing: string[] = [];
  const notAttached = (ref: AttachmentRef, why: string) => notices.push({ code: "attachment_not_attached", message: `${ref.token} was not attached (${why}); it stays in the message as typed` });
  let textBytes = 0;

  for (const ref of findAttachmentRefs(text)) {
    const found = await resolveRef(rootReal, cwd, ref);
    if (found === undefined) {
      missing.push(ref.token);
      continue;
    }
    if (!found.ok) {
      notAttached(ref, found.problem);
      continue;
    }
    if (found.isDir) {
      const { files, more } = await listing(rootReal, found.abs);
      blocks.push(listingBlock(found.rel, files, more));
      attached.push(`${found.rel}/`);
      continue;
    }
    if (ref.path.endsWith("/")) {
      notAttached(ref, `${found.rel} is a file, not a directory`);
      continue;
    }
    if (isImagePath(found.rel)) {
      const read = await readConfined(found.abs, found.rel, IMAGE_MAX_BYTES);
      if (!read.ok) {
        notAttached(ref, read.reason === "too_large" ? `${found.rel} is ${read.size} bytes, over the ${IMAGE_MAX_BYTES}-byte (5 MB) cap for images` : read.problem);
        continue;
      }
      if (read.links > 1) {
        notAttached(ref, `${found.rel} has ${read.links} hard links: another name for it may be outside the workspace`);
        continue;
      }
      const type = sniffImageType(read.bytes);
      if (!type) {
        notAttached(ref, `${found.rel} is not a PNG, JPEG, GIF or WebP image, whatever its name says`);
        continue;
      }
      images.push({ path: found.rel, image: { image_url: imageDataUrl(read.bytes, type), detail: "auto" } });
      blocks.push(imageBlock(found.rel, type, read.bytes.length));
      attached.push(found.rel);
      continue;
    }
    const read = await readConfined(found.abs, found.rel, ATTACHMENT_READ_MAX_BYTES);
    if (!read.ok) {
      notAttached(ref, read.reason === "too_large" ? `${found.rel} is ${read.size} bytes, too large to attach even in part; ask for the part you need instead` : read.problem);
      continue;
    }
    if (read.links > 1) {
      notAttached(ref, `${found.rel} has ${read.links} hard links: another name for it may be outside the workspace (read_file asks about it)`);
      continue;
    }
    // UTF-16 with its byte-order mark (PowerShell's `>` writes it) is text: attached as UTF-8.
    const bytes = asUtf8(read.bytes);
    if (looksBinary(bytes)) {
      notAttached(ref, `${found.rel} is a binary file`);
      continue;
    }
    const shortened = bytes.length > ATTACHMENT_MAX_BYTES;
    const body = shortened ? headAndTail(bytes, found.rel) : bytes.toString("utf8");
    const size = Buffer.byteLength(body);
    if (textBytes + size > ATTACHMENTS_TOTAL_MAX_BYTES) {
      notAttached(ref, `the message's attachments would pass ${ATTACHMENTS_TOTAL_MAX_BYTES} bytes`);
      continue;
    }
    textBytes += size;
    blocks.push(fileBlock(found.rel, body, bytes.length, shortened ? "head+tail" : undefined));
    attached.push(found.rel);
    if (shortened) {
      notices.push({
        code: "attachment_shortened",
        message: `${ref.token} is ${bytes.length} bytes, over the ${ATTACHMENT_MAX_BYTES}-byte attachment cap: only its head and tail were attached (the model can read the rest with read_file)`,
      });
    }
  }
  if (missing.length > 0) {
    const where = relative(rootReal, cwd) === "" ? "the workspace" : "the current directory or the workspace root";
    notices.unshift({
      code: "attachment_not_attached",
      message: `${missing.join(", ")}: no such file or directory in ${where}, so ${missing.length === 1 ? "it stays" : "they stay"} in the message as typed`,
    });
  }
  for (const extra of options.images ?? []) {
    images.push({ path: extra.path, image: extra.image });
    blocks.push(imageBlock(extra.path, extra.type, extra.bytes));
    attached.push(extra.path);
  }
  return { text: withAttachments(text, blocks), images, notices, attached };
}

/** Expands, or — when reading fails unexpectedly — keeps the message as typed and says why: the message itself is never lost. */
export async function expandAttachmentsSafely(text: string, options: ExpandOptions): Promise<ExpandedMessage> {
  try {
    return await expandAttachments(text, options);
  } catch (error) {
    const images = (options.images ?? []).map((extra) => ({ path: extra.path, image: extra.image }));
    return {
      text: withAttachments(text, (options.images ?? []).map((extra) => imageBlock(extra.path, extra.type, extra.bytes))),
      images,
      notices: [{ code: "attachment_not_attached", message: `the message's @ references could not be read (${describeError(error)}); it was sent as typed` }],
      attached: images.map((i) => i.path),
    };
  }
}
