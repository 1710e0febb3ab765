import { afterAll, describe, expect, test } from "bun:test";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { countTokens as referenceCount } from "gpt-tokenizer/encoding/o200k_base";
import { CHUNK_UNITS, createO200kCounter } from "../../src/tokens/o200k-count.ts";
import { loadRankTable, o200kSource, parseRankTable, serializeRankTable } from "../../src/tokens/o200k-table.ts";
import { countTokens } from "../../src/tokens/tokenizer.ts";
import { cleanupTempDirs, makeTempDir } from "../support/cli.ts";

afterAll(cleanupTempDirs);

// Text that spells a special token is ordinary text for counting (as the API treats user content).
const asText = { disallowedSpecial: new Set<string>() };
const reference = (text: string) => referenceCount(text, asText);
const loaded = await loadRankTable();
const counter = createO200kCounter(loaded.table);

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 0x1_0000_0000;
  };
}

const POOL = [
  "a", "Z", "é", "ß", "ñ", "日", "本", "語", "한", "ع", "ש", "ф", "Ж", "̀", "́", "ँ", "0", "7", "42", "1e3", "٣",
  " ", "  ", "\t", "\n", "\r\n", "\u00a0", "\u3000", "'s", "'LL", "'ve", ",", ".", ":", "::", "/", "//", "{", "}", "\"",
  "😀", "🚀", "👨‍👩‍👧", "🇪🇸", "\ud800", "\udfff", "<|endoftext|>", "<|im_start|>", "  x", "HTTPServer", "camelCase", "ALLCAPS",
];

describe("o200k counter", () => {
  test("matches gpt-tokenizer's own test plans for o200k_base", async () => {
    const plans = await readFile(Bun.fileURLToPath(import.meta.resolve("gpt-tokenizer/data/TestPlans.txt")), "utf8");
    const cases = plans
      .split("\n\n")
      .map((block) => block.match(/^EncodingName: o200k_base\nSample: ([\s\S]*)\nEncoded: \[(.*)\]/))
      .filter((m): m is RegExpMatchArray => m !== null);
    expect(cases.length).toBeGreaterThan(10);
    for (const [, sample = "", encoded = ""] of cases) {
      const expected = encoded.trim() === "" ? 0 : encoded.split(",").length;
      expect({ sample, n: counter.count(sample) }).toEqual({ sample, n: expected });
    }
  });

  test("matches gpt-tokenizer on 3,000 random strings (unicode, whitespace, lone surrogates, special-token text)", () => {
    const random = rng(2026);
    for (let i = 0; i < 3000; i++) {
      const parts = Array.from({ length: 1 + Math.floor(random() * 40) }, () => POOL[Math.floor(random() * POOL.length)] ?? "");
      const text = parts.join("");
      expect({ text, n: counter.count(text) }).toEqual({ text, n: reference(text) });
    }
  });

  test("matches gpt-tokenizer on this repository's source and docs", async () => {
    const glob = new Bun.Glob("{src,test,docs}/**/*.{ts,tsx,md,json}");
    let files = 0;
    for await (const path of glob.scan({ cwd: join(import.meta.dir, "../..") })) {
      const text = await readFile(join(import.meta.dir, "../..", path), "utf8");
      expect({ path, n: counter.count(text) }).toEqual({ path, n: reference(text) });
      files++;
    }
    expect(files).toBeGreaterThan(20);
  });

  test("the heap merge is exact on single pre-tokens up to the chunk size (long words, CJK runs, runs of one character)", () => {
    const random = rng(9);
    const letters = (n: number, from: string) => Array.from({ length: n }, () => from[Math.floor(random() * from.length)] ?? "").join("");
    const pieces = [
      "a".repeat(CHUNK_UNITS),
      letters(3000, "abcdefghijklmnopqrstuvwxyz"),
      `Q${letters(2500, "etaoinshrdlu")}`,
      letters(1300, "日本語中文字漢では"),
      " ".repeat(3000),
      "=".repeat(3000),
      "😀!".repeat(1000),
    ];
    for (const text of pieces) {
      expect(text.length).toBeLessThanOrEqual(CHUNK_UNITS);
      expect({ head: text.slice(0, 20), n: counter.count(text) }).toEqual({ head: text.slice(0, 20), n: reference(text) });
    }
  });

  test("a pre-token longer than the chunk size is counted within one token per chunk boundary of the exact count", () => {
    const random = rng(11);
    const word = Array.from({ length: 10_000 }, () => "abcdefghijklmnopqrstuvwxyz"[Math.floor(random() * 26)] ?? "").join("");
    // "😀!" puts a surrogate pair across the first chunk boundary: it must not be split.
    for (const text of [word, "😀!".repeat(3000), " ".repeat(9000)]) {
      const boundaries = Math.ceil(text.length / CHUNK_UNITS) - 1;
      expect(Math.abs(counter.count(text) - reference(text))).toBeLessThanOrEqual(boundaries);
    }
    // Runs of `a` merge in 8s at every length the exact merge gives (20 KB → 2,500), so chunking keeps it exact.
    expect(counter.count("a".repeat(1_000_000))).toBe(125_000);
  });

  test("countTokens counts special-token text as text and memoises", async () => {
    expect(await countTokens("say <|endoftext|> now")).toBe(reference("say <|endoftext|> now"));
    expect(await countTokens("")).toBe(0);
  });
});

describe("o200k rank table cache", () => {
  test("serialises and parses back to the same table; any damage is rejected", () => {
    const bytes = serializeRankTable(loaded.table);
    const parsed = parseRankTable(bytes.slice().buffer);
    expect(parsed?.offsets).toEqual(loaded.table.offsets);
    expect(parsed?.slots).toEqual(loaded.table.slots);
    expect(parsed?.blob).toEqual(loaded.table.blob);
    const flipped = bytes.slice();
    flipped[flipped.length - 100] = (flipped[flipped.length - 100] ?? 0) ^ 1;
    expect(parseRankTable(flipped.buffer)).toBeUndefined();
    expect(parseRankTable(bytes.slice(0, bytes.length - 4).buffer)).toBeUndefined();
    expect(parseRankTable(new ArrayBuffer(8))).toBeUndefined();
  });

  test("is built once, then read from the cache; a corrupt cache file is rebuilt", async () => {
    const dir = await makeTempDir();
    const source = await o200kSource();
    const first = await loadRankTable(source, dir);
    expect(first.origin).toBe("built");
    expect(first.cachePath.startsWith(dir)).toBe(true);
    const second = await loadRankTable(source, dir);
    expect(second.origin).toBe("cache");
    expect(createO200kCounter(second.table).count("hello world, 世界")).toBe(reference("hello world, 世界"));
    await writeFile(first.cachePath, "garbage");
    expect((await loadRankTable(source, dir)).origin).toBe("built");
    expect((await loadRankTable(source, dir)).origin).toBe("cache");
  });

  test("an unwritable cache still gives exact counts and says why", async () => {
    const dir = await makeTempDir();
    const blocker = join(dir, "file");
    await writeFile(blocker, "not a directory");
    const r = await loadRankTable(await o200kSource(), join(blocker, "cache"));
    expect(r.origin).toBe("built-uncached");
    expect(r.cacheError).toBeDefined();
    expect(createO200kCounter(r.table).count("exact anyway")).toBe(reference("exact anyway"));
  });
});
