/**
 * `chat -p --image PATH` (repeatable): the image is read and checked before anything is written or
 * sent, so a wrong file stops the run with a usage error (exit 2) naming the flag. The path is the
 * user's own choice, like a shell redirect: it may be outside the workspace (a screenshot in
 * ~/Pictures); `@shot.png` in a message, which a pasted text could carry, is confined instead.
 */
import { constants } from "node:fs";
import { open } from "node:fs/promises";
import { UsageError, describeError } from "../errors.ts";
import type { ImageFileAttachment } from "../prompt/attachment-files.ts";
import { IMAGE_MAX_BYTES, imageDataUrl, sniffImageType } from "../prompt/images.ts";
import { errnoCode } from "../errors.ts";

const HINT = "Pass a PNG, JPEG, GIF or WebP file of at most 5 MB, e.g. --image screenshot.png.";

export async function readImageFlag(path: string): Promise<ImageFileAttachment> {
  let bytes: Buffer;
  try {
    // O_NONBLOCK: a FIFO named by mistake must not hang the run; it is refused below.
    const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      const info = await handle.stat();
      if (!info.isFile()) throw new UsageError(`--image ${path} is not a regular file`, { hint: HINT });
      if (info.size > IMAGE_MAX_BYTES) throw new UsageError(`--image ${path} is ${info.size} bytes, over the ${IMAGE_MAX_BYTES}-byte (5 MB) cap for images`, { hint: "Scale the image down or crop it (a screenshot of the relevant window is usually well under 1 MB)." });
      bytes = await handle.readFile();
    } finally {
      await handle.close();
    }
  } catch (error) {
    if (error instanceof UsageError) throw error;
    const code = errnoCode(error);
    if (code === "ENOENT" || code === "ENOTDIR") throw new UsageError(`--image ${path}: no such file`, { hint: HINT });
    if (code === "EISDIR") throw new UsageError(`--image ${path} is a directory`, { hint: HINT });
    throw new UsageError(`--image ${path} cannot be read: ${describeError(error)}`, { hint: HINT });
  }
  const type = sniffImageType(bytes);
  if (!type) throw new UsageError(`--image ${path} is not a PNG, JPEG, GIF or WebP image`, { hint: HINT });
  return { path, type, bytes: bytes.length, image: { image_url: imageDataUrl(bytes, type), detail: "auto" } };
}
