/** A builder input with every section present, for prompt tests. */
import { ShortTermMemory } from "../../../src/memory/short-term.ts";
import type { BuildInput } from "../../../src/prompt/builder.ts";
import { exactCounter } from "../../../src/prompt/builder.ts";
import type { NewRecord, TranscriptRecord } from "../../../src/session/transcript-schema.ts";
import { agentLikeRecords, fullState, syntheticWorkingSet } from "./synthetic-session.ts";

export const SETTINGS = { model: "gpt-5.5", maxContextTokens: 24000, toolOutputTokens: 2000, windowBlockTurns: 8, windowAnswerTokens: 80, reasoningEffort: "medium" } as const;

export const TOOLS = [
  { type: "function", name: "read_file", description: "Read a file.", parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"], additionalProperties: false }, strict: true },
  { type: "function", name: "edit_file", description: "Replace one unique snippet.", parameters: { type: "object", properties: { path: { type: "string" }, old: { type: "string" }, new: { type: "string" } }, required: ["path", "old", "new"], additionalProperties: false }, strict: true },
] as const;

export function stamp(records: readonly NewRecord[]): TranscriptRecord[] {
  return records.map((r) => ({ v: 1, ts: "2026-01-31T12:00:00.000Z", ...r }) as TranscriptRecord);
}

export async function memoryOf(turns: number, workingSetItems = 0): Promise<ShortTermMemory> {
  const count = await exactCounter();
  const records = await agentLikeRecords({ turns, shortBufferTurns: 24, windowBlockTurns: 8, countTokens: count });
  const memory = ShortTermMemory.fromRecords(stamp(records), { shortBufferTurns: 24, windowBlockTurns: 8, workingSetTokens: 4000, overflowPolicy: "priority", countTokens: count });
  if (workingSetItems > 0) memory.workingSet.restore(syntheticWorkingSet(workingSetItems, count));
  return memory;
}

export async function fullInput(overrides: Partial<BuildInput> = {}): Promise<BuildInput> {
  // 36 turns: turns 1–16 folded into the summary, 16 settled window turns, 4 recent ones.
  const memory = await memoryOf(36, 10);
  return {
    settings: SETTINGS,
    sessionId: "test1234",
    turn: 37,
    now: new Date("2026-01-31T12:34:00Z"),
    clock: () => new Date("2026-01-31T12:34:05Z"),
    tools: TOOLS.map((t) => ({ ...t, parameters: { ...t.parameters } })),
    sources: {
      project: { path: "VALARMIND.md", text: "# Project\n\nUse bun. Keep files small.\n" },
      personal: { path: "VALARMIND.local.md", text: "Answer tersely.\n" },
      state: fullState(),
      git: { branch: "main", upstream: "ahead 1", changes: ["M src/parser.ts"], changeCount: 1 },
    },
    memory: memory.view(),
    task: { userText: "Now fix the lexer in src/lexer.ts too.", items: [] },
    ...overrides,
  };
}
