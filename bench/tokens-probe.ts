/**
 * One token-counting workload in a fresh process, for bench/tokens.bench.ts (which runs it under
 * each JIT setting with a timeout, so a superlinear case cannot hang the bench). Prints one JSON
 * line: { ms, tokens?, note? }. The tokenizer is loaded before the clock starts.
 *
 *   bun bench/tokens-probe.ts word <bytes>        count one word of <bytes> `a`s
 *   bun bench/tokens-probe.ts random-word <n>     count one word of <n> random lowercase letters (no repeats to cache)
 *   bun bench/tokens-probe.ts cjk-line <n>        count one line of <n> CJK characters (one pre-token, 3 bytes each)
 *   bun bench/tokens-probe.ts mixed-line <bytes>  count one line of mixed text (source, newlines → spaces)
 *   bun bench/tokens-probe.ts source              count ~1 MB of src/**\/*.ts
 *   bun bench/tokens-probe.ts shell-line <bytes>  run_shell printing one line of <bytes> `a`s, through
 *                                                 the registry's truncation and the prompt's shortening
 *   bun bench/tokens-probe.ts grep-js             the grep tool's JS fallback over this repository
 */
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { countTokensIfReady, loadTokenizer } from "../src/tokens/tokenizer.ts";
import { shortenHeadTail } from "../src/prompt/shorten.ts";
import { createToolRegistry } from "../src/tools/registry.ts";
import { searchWithJs } from "../src/tools/grep-search.ts";

const repoRoot = resolve(import.meta.dir, "..");
const [kind = "", arg = "0"] = process.argv.slice(2);
const size = Number(arg);

async function sourceText(limit: number): Promise<string> {
  let text = "";
  for (const file of [...new Bun.Glob("src/**/*.ts").scanSync({ cwd: repoRoot })].sort()) {
    text += await Bun.file(join(repoRoot, file)).text();
    if (text.length >= limit) break;
  }
  return text.slice(0, limit);
}

function exactCount(text: string): number {
  const n = countTokensIfReady(text);
  if (n === undefined) throw new Error("tokenizer not loaded");
  return n;
}

async function timed(work: () => Promise<{ tokens?: number; note?: string }>): Promise<void> {
  const started = performance.now();
  const result = await work();
  process.stdout.write(`${JSON.stringify({ ms: performance.now() - started, ...result })}\n`);
}

await loadTokenizer();
if (kind === "word") {
  const text = "a".repeat(size);
  await timed(async () => ({ tokens: exactCount(text) }));
} else if (kind === "random-word" || kind === "cjk-line") {
  const alphabet = kind === "cjk-line" ? "日本語中文字漢では的一是不了人我在有他这" : "abcdefghijklmnopqrstuvwxyz";
  let seed = 2026;
  const chars: string[] = [];
  for (let i = 0; i < size; i++) {
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
    chars.push(alphabet[seed % alphabet.length] ?? "");
  }
  const text = chars.join("");
  await timed(async () => ({ tokens: exactCount(text) }));
} else if (kind === "mixed-line") {
  const text = (await sourceText(size)).replace(/\s+/g, " ");
  await timed(async () => ({ tokens: exactCount(text) }));
} else if (kind === "source") {
  const text = await sourceText(1_000_000);
  await timed(async () => ({ tokens: exactCount(text) }));
} else if (kind === "shell-line") {
  const dir = await mkdtemp(join(tmpdir(), "vm-tokens-"));
  await writeFile(join(dir, "line.txt"), "a".repeat(size));
  const registry = createToolRegistry({ root: dir, settings: { approvals: "full-auto", toolOutputTokens: 2000, shellTimeoutMs: 60_000 } });
  const call = { callId: "c1", name: "run_shell", arguments: JSON.stringify({ command: "cat line.txt" }) };
  await timed(async () => {
    const outcome = await registry.run(call, { signal: new AbortController().signal });
    // What the next request's conversation section does with the output (src/prompt/sections/conversation.ts).
    const shown = shortenHeadTail(outcome.forModel, 2000, exactCount);
    return { tokens: exactCount(shown.text), note: `raw ${outcome.raw.length} chars` };
  });
} else if (kind === "grep-js") {
  await timed(async () => {
    let matches = 0;
    const query = { pattern: "function \\w+\\(", target: repoRoot, matchesGlob: () => true, caseInsensitive: false, literal: false };
    for await (const _ of searchWithJs(repoRoot, query, new AbortController().signal)) matches++;
    return { note: `${matches} matches` };
  });
} else {
  throw new Error(`tokens-probe: unknown workload ${JSON.stringify(kind)} (see the comment at the top of bench/tokens-probe.ts)`);
}
