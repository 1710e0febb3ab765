/**
 * Images attached to a turn (`@shot.png` in a message, `chat -p --image PATH`): which files are
 * images (by their first bytes, not their name), the cap, the data URL they travel as, and an
 * estimate of what they cost. The local tokenizer cannot count an image: the estimate follows
 * OpenAI's published rule for `detail: "auto"`/high (fit in 2048×2048, shortest side at most 768,
 * then 170 tokens per 512-pixel tile plus 85), from the dimensions in the file's header. The
 * manifest shows the estimate; `--tokens api` and the usage after the call give the truth.
 */
import type { InputImage } from "../model/types.ts";

/** Images larger than this are refused (the Responses API takes up to 50 MB a request; one image rarely needs 5). */
export const IMAGE_MAX_BYTES = 5 * 1024 * 1024;

export type ImageMediaType = "image/png" | "image/jpeg" | "image/gif" | "image/webp";

/** File name endings an `@path` is taken as an image for. */
export const IMAGE_EXTENSIONS: Readonly<Record<string, ImageMediaType>> = {
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
};

/** The image type the bytes start with, or undefined when they are none of PNG, JPEG, GIF and WebP. */
export function sniffImageType(bytes: Uint8Array): ImageMediaType | undefined {
  const ascii = (from: number, to: number) => String.fromCharCode(...bytes.subarray(from, to));
  if (bytes.length >= 8 && bytes[0] === 0x89 && ascii(1, 4) === "PNG") return "image/png";
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return "image/jpeg";
  if (bytes.length >= 6 && (ascii(0, 6) === "GIF87a" || ascii(0, 6) === "GIF89a")) return "image/gif";
  if (bytes.length >= 12 && ascii(0, 4) === "RIFF" && ascii(8, 12) === "WEBP") return "image/webp";
  return undefined;
}

export interface ImageSize {
  width: number;
  height: number;
}

function jpegSize(bytes: Uint8Array, view: DataView): ImageSize | undefined {
  let at = 2;
  while (at + 9 < bytes.length) {
    if (bytes[at] !== 0xff) return undefined;
    const marker = bytes[at + 1] ?? 0;
    if (marker === 0xff) {
      at += 1; // fill byte
      continue;
    }
    const length = view.getUint16(at + 2);
    // SOF0–SOF15 carry the frame size; C4 (DHT), C8 (JPG) and CC (DAC) share the range but do not.
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { height: view.getUint16(at + 5), width: view.getUint16(at + 7) };
    }
    at += 2 + length;
  }
  return undefined;
}

function webpSize(bytes: Uint8Array, view: DataView): ImageSize | undefined {
  const chunk = String.fromCharCode(...bytes.subarray(12, 16));
  if (chunk === "VP8 " && bytes.length >= 30) return { width: view.getUint16(26, true) & 0x3fff, height: view.getUint16(28, true) & 0x3fff };
  if (chunk === "VP8L" && bytes.length >= 25) {
    const bits = view.getUint32(21, true);
    return { width: (bits & 0x3fff) + 1, height: ((bits >> 14) & 0x3fff) + 1 };
  }
  if (chunk === "VP8X" && bytes.length >= 30) {
    const u24 = (at: number) => (bytes[at] ?? 0) | ((bytes[at + 1] ?? 0) << 8) | ((bytes[at + 2] ?? 0) << 16);
    return { width: u24(24) + 1, height: u24(27) + 1 };
  }
  return undefined;
}

/** Width and height from the file's header; undefined when the header does not say. */
export function imageSize(bytes: Uint8Array, type: ImageMediaType): ImageSize | undefined {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  try {
    if (type === "image/png") return bytes.length >= 24 ? { width: view.getUint32(16), height: view.getUint32(20) } : undefined;
    if (type === "image/gif") return bytes.length >= 10 ? { width: view.getUint16(6, true), height: view.getUint16(8, true) } : undefined;
    if (type === "image/jpeg") return jpegSize(bytes, view);
    return webpSize(bytes, view);
  } catch {
    return undefined; // a header cut short (RangeError)
  }
}

/** What an image of unknown size is taken to cost: a 1024×1024 image. */
export const IMAGE_TOKENS_UNKNOWN = 765;

/** OpenAI's tile rule for detail "auto"/high (see the module comment). */
export function imageTokensFor(size: ImageSize | undefined): number {
  if (!size || size.width <= 0 || size.height <= 0) return IMAGE_TOKENS_UNKNOWN;
  let { width, height } = size;
  const fit = Math.min(1, 2048 / Math.max(width, height));
  width *= fit;
  height *= fit;
  const shortest = Math.min(1, 768 / Math.min(width, height));
  width *= shortest;
  height *= shortest;
  return 85 + 170 * Math.ceil(width / 512) * Math.ceil(height / 512);
}

export function imageDataUrl(bytes: Uint8Array, type: ImageMediaType): string {
  return `data:${type};base64,${Buffer.from(bytes).toString("base64")}`;
}

/** Estimates by data URL: an image is decoded once however often the request is rebuilt. */
const estimated = new Map<string, number>();

/** The estimated tokens of an image in a request (decoded from its data URL, memoised). */
export function imageTokens(image: InputImage): number {
  const known = estimated.get(image.image_url);
  if (known !== undefined) return known;
  const match = /^data:(image\/(?:png|jpeg|gif|webp));base64,/.exec(image.image_url);
  let tokens = IMAGE_TOKENS_UNKNOWN;
  if (match?.[1]) {
    const bytes = Buffer.from(image.image_url.slice(match[0].length), "base64");
    const type = sniffImageType(bytes);
    if (type) tokens = imageTokensFor(imageSize(bytes, type));
  }
  if (estimated.size >= 64) estimated.clear();
  estimated.set(image.image_url, tokens);
  return tokens;
}
