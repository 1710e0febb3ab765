/**
 * Deterministic synthetic sessions for tests and benchmarks: realistic-looking turns (a request,
 * a few tool calls on source files with summaries, an answer), a full working state and a
 * working set. Same seed, same session.
 */
import { ShortTermMemory } from "../../../src/memory/short-term.ts";
import { ExtractiveSummarizer } from "../../../src/memory/summary.ts";
import type { NewRecord, TranscriptRecord } from "../../../src/session/transcript-schema.ts";
import type { WorkingState } from "../../../src/state/schema.ts";
import type { WorkingSetItem } from "../../../src/memory/working-set.ts";

const FILES = ["src/parser.ts", "src/lexer.ts", "src/cli/main.ts", "src/config/load.ts", "test/parser.test.ts", "README.md", "src/eval/env.ts", "src/eval/apply.ts"];
const ASKS = [
  "Fix the failing test in {f}: the tokenizer drops the last character of a quoted string.",
  "Add a --verbose flag that prints each step; wire it through {f}.",
  "Why does {f} allocate a new buffer on every call? Make it reuse one.",
  "Rename `parseExpr` to `parseExpression` everywhere, starting in {f}.",
  "Write a test for the error message when {f} meets an unterminated comment.",
  "Explain how the environment chain in {f} resolves shadowed names.",
];

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function codeLines(r: () => number, n: number, file: string): string {
  const lines: string[] = [];
  for (let i = 0; i < n; i++) {
    const k = Math.floor(r() * 1000);
    lines.push(`${String(i + 1).padStart(4)}  export function step${k}(input: string, index: number): number { return input.charCodeAt(index) ^ ${k}; } // ${file}`);
  }
  return lines.join("\n");
}

export interface SyntheticOptions {
  turns: number;
  seed?: number;
  /** Tool calls per turn (0–3 when omitted). */
  toolsPerTurn?: number;
  /** Lines of the raw read_file output per call. */
  outputLines?: number;
}

/** Transcript records (after the header) for a finished session of `turns` turns. */
export function syntheticRecords(options: SyntheticOptions): NewRecord[] {
  const r = rng(options.seed ?? 7);
  const records: NewRecord[] = [];
  for (let turn = 1; turn <= options.turns; turn++) {
    const file = FILES[Math.floor(r() * FILES.length)] ?? "src/parser.ts";
    const ask = (ASKS[turn % ASKS.length] ?? "").replace("{f}", file);
    records.push({ kind: "user", turn, text: `${ask} (turn ${turn})` });
    const calls = options.toolsPerTurn ?? Math.floor(r() * 4);
    for (let c = 1; c <= calls; c++) {
      const callFile = FILES[Math.floor(r() * FILES.length)] ?? file;
      const name = c === calls && turn % 3 === 0 ? "edit_file" : "read_file";
      const args = name === "read_file" ? { path: callFile } : { path: callFile, old: "index + 1", new: "index" };
      const output = name === "read_file" ? codeLines(r, options.outputLines ?? 40, callFile) : `edited ${callFile}: 1 replacement`;
      records.push({
        kind: "tool_call",
        turn,
        step: c,
        call_id: `call_${turn}_${c}`,
        name,
        arguments: JSON.stringify(args),
        output,
        summary: name === "read_file" ? `read ${callFile}: ${options.outputLines ?? 40} lines (exports step functions)` : output,
        is_error: false,
      });
    }
    records.push({
      kind: "assistant",
      turn,
      step: calls + 1,
      text: `Done with turn ${turn}. I looked at ${file} and the change is in place: the index arithmetic now stays within the string, and the test covers the quoted case. Run \`bun test\` to confirm.`,
    });
    records.push({ kind: "turn_end", turn, steps: calls + 1, stop_reason: "completed", usage: { input: 9000, cached: 8000, output: 300, reasoning: 100 } });
  }
  return records;
}

export function fullState(now = new Date("2026-01-31T12:00:00Z")): WorkingState {
  const ts = (d: number) => new Date(now.getTime() - d * 3_600_000).toISOString();
  return {
    schema_version: 1,
    updated_at: now.toISOString(),
    goal: "Ship a small Scheme interpreter in TypeScript with a REPL, tail calls and good error messages",
    now: "Fixing the tokenizer's handling of quoted strings",
    decisions_recent: Array.from({ length: 8 }, (_, i) => ({
      id: `ADR-${String(i + 1).padStart(4, "0")}`,
      title: `Decision ${i + 1}: use a hand-written recursive-descent parser for ${FILES[i % FILES.length]}`,
      why: "Clear error messages and no generator step",
      ts: ts(48 - i),
    })),
    tasks_open: Array.from({ length: 10 }, (_, i) => ({
      id: `T-${i + 1}`,
      title: `Task ${i + 1}: tidy ${FILES[i % FILES.length]}`,
      status: i === 0 ? ("in_progress" as const) : i === 1 ? ("blocked" as const) : ("open" as const),
      updated_at: ts(10 - i),
      ...(i === 0 ? { files: ["src/parser.ts"] } : {}),
    })),
    blockers: [{ id: "B-1", text: "Waiting for the grammar spec of block comments", ts: ts(5), task: "T-2" }],
    conventions: { language: "TypeScript", runtime: "Bun", testing: "bun test", style: "no default exports" },
  };
}

/** `count` working-set items of ~70 tokens each (50 fit the default 4,000-token working set). */
export function syntheticWorkingSet(count: number, countTokens: (text: string) => number, seed = 11): WorkingSetItem[] {
  const r = rng(seed);
  return Array.from({ length: count }, (_, i) => {
    const file = FILES[i % FILES.length] ?? "src/parser.ts";
    const content = codeLines(r, 2, file);
    return {
      id: `ws-item-${i + 1}`,
      content,
      source: i % 3 === 0 ? "grep" : "read_file",
      priority: 0.3 + (i % 7) / 10,
      tags: [file],
      tokens: countTokens(content),
      added_turn: i,
      accessed_turn: i,
      added_at: "2026-01-31T12:00:00.000Z",
      accessed_at: "2026-01-31T12:00:00.000Z",
    };
  });
}

export interface AgentLikeOptions extends SyntheticOptions {
  shortBufferTurns: number;
  windowBlockTurns: number;
  countTokens: (text: string) => number;
}

/** Records as the agent writes them: token counts stored, and a summary record whenever the window slides. */
export async function agentLikeRecords(options: AgentLikeOptions): Promise<NewRecord[]> {
  const memory = new ShortTermMemory({ ...options, workingSetTokens: 4000, overflowPolicy: "priority" });
  const summarizer = new ExtractiveSummarizer();
  const out: NewRecord[] = [];
  let pending: TranscriptRecord[] = [];
  for (const record of syntheticRecords(options)) {
    const counted: NewRecord =
      record.kind === "user" || record.kind === "assistant"
        ? { ...record, tokens: options.countTokens(record.text) }
        : record.kind === "tool_call"
          ? {
              ...record,
              tokens: {
                call: options.countTokens(record.name) + options.countTokens(record.arguments),
                output: options.countTokens(record.output),
                summary: options.countTokens(record.summary),
              },
            }
          : record;
    out.push(counted);
    pending.push({ v: 1, ts: "2026-01-31T12:00:00.000Z", ...counted } as TranscriptRecord);
    if (record.kind !== "turn_end") continue;
    const turn = ShortTermMemory.fromRecords(pending, { ...options, workingSetTokens: 4000, overflowPolicy: "priority" }).window.turns[0];
    pending = [];
    if (!turn) continue;
    memory.endTurn(turn);
    const fold = await memory.slide(summarizer);
    if (fold) out.push(fold);
  }
  return out;
}
