/**
 * A scripted conversation driven through the real pieces the agent uses — ShortTermMemory,
 * buildRequest, the window slide with the offline summarizer — with default settings: each turn
 * has a user message, 0–3 tool calls (one model call per step), an answer; the state changes
 * now and then; the working set gains items at turn ends. Yields every request built, in order.
 */
import { readFileSync } from "node:fs";
import { ShortTermMemory } from "../../../src/memory/short-term.ts";
import { ExtractiveSummarizer } from "../../../src/memory/summary.ts";
import type { Turn, TurnItem } from "../../../src/memory/turn.ts";
import type { FunctionToolSpec, ModelRequest } from "../../../src/model/types.ts";
import { buildRequest, exactCounter, type BuildSettings } from "../../../src/prompt/builder.ts";
import type { Manifest } from "../../../src/prompt/manifest-schema.ts";
import type { Regions } from "../../../src/prompt/regions.ts";
import type { WorkingState } from "../../../src/state/schema.ts";
import { fullState } from "./synthetic-session.ts";

export interface ScriptedRequest {
  turn: number;
  step: number;
  request: ModelRequest;
  manifest: Manifest;
}

export interface ScriptOptions {
  turns: number;
  settings: BuildSettings & { shortBufferTurns: number; workingSetTokens: number };
  tools: readonly FunctionToolSpec[];
  regions?: Regions;
}

const FILES = ["src/parser.ts", "src/lexer.ts", "src/eval/env.ts", "src/eval/apply.ts", "test/parser.test.ts", "README.md"];

const CODE = [
  "export function parseList(tokens: Token[], at: number): ParseResult {",
  "  const items: Expr[] = [];",
  "  let i = at + 1;",
  "  while (i < tokens.length && tokens[i].kind !== \"rparen\") {",
  "    const { expr, next } = parseExpr(tokens, i);",
  "    items.push(expr);",
  "    i = next;",
  "  }",
  "  if (i >= tokens.length) throw new SchemeError(\"unclosed list\", tokens[at].span);",
  "  return { expr: { kind: \"list\", items, span: spanOf(tokens, at, i) }, next: i + 1 };",
  "}",
  "",
];

/** A read_file result: numbered lines of plausible source. */
function fileBody(file: string, turn: number, lines = 40): string {
  const header = `// ${file} (as of turn ${turn})`;
  return [header, ...Array.from({ length: lines }, (_, i) => `${String(i + 1).padStart(4)}  ${CODE[i % CODE.length]}`)].join("\n");
}

const INSTRUCTIONS = readFileSync(new URL("../fixtures/VALARMIND.md", import.meta.url), "utf8");

export async function* scriptedConversation(options: ScriptOptions): AsyncGenerator<ScriptedRequest> {
  const count = await exactCounter();
  const { settings } = options;
  const memory = new ShortTermMemory({ ...settings, overflowPolicy: "priority", countTokens: count });
  const summarizer = new ExtractiveSummarizer();
  let state: WorkingState = fullState();
  // The state as the cached part shows it, refreshed at folds as the agent does (ADR 0074).
  let snapshot = { turn: 0, state };
  const start = new Date("2026-01-31T09:00:00Z").getTime();
  for (let turn = 1; turn <= options.turns; turn++) {
    const file = FILES[turn % FILES.length] ?? "src/parser.ts";
    const userText = `Turn ${turn}: look at ${file} and ${turn % 2 ? "fix the off-by-one in the loop" : "add a test for the empty input"}.`;
    const now = new Date(start + turn * 4 * 60_000);
    const calls = turn % 4; // 0, 1, 2, 3 tool calls
    const items: TurnItem[] = [];
    memory.workingSet.setTurn(turn);
    memory.workingSet.setAttention([file]);
    for (let step = 1; step <= calls + 1; step++) {
      const built = await buildRequest({
        settings,
        sessionId: "scripted",
        turn,
        step,
        now,
        tools: options.tools,
        ...(options.regions && { regions: options.regions }),
        sources: { state, stateSnapshot: snapshot, project: { path: "VALARMIND.md", text: INSTRUCTIONS } },
        memory: memory.view(),
        task: { userText, items: [...items] },
      });
      yield { turn, step, request: built.request, manifest: built.manifest };
      if (step <= calls) {
        const target = FILES[(turn + step) % FILES.length] ?? file;
        items.push({ kind: "tool", callId: `call_${turn}_${step}`, name: "read_file", arguments: JSON.stringify({ path: target }), output: fileBody(target, turn), isError: false });
      }
    }
    items.push({ kind: "assistant", text: `Turn ${turn} done: changed ${file}; tests pass.` });
    // The window keeps summaries of tool results; the raw output stays in the transcript.
    const windowItems = items.map((item) => (item.kind === "tool" ? { ...item, output: `read ${JSON.parse(item.arguments).path}: 40 lines` } : item));
    const done: Turn = { turn, user: userText, items: windowItems, stopReason: "completed" };
    memory.endTurn(done);
    if (await memory.slide(summarizer)) snapshot = { turn, state };
    // A long read of this turn: it enters the working set when the turn folds (ADR 0074).
    if (turn % 3 === 0) memory.holdBack(turn, { content: fileBody(file, turn, 4), source: "read_file", tags: [file], priority: 0.6 });
    if (turn % 5 === 0) state = { ...state, now: `Working on ${file} (turn ${turn})` };
  }
}
