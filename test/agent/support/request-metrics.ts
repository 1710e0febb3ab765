/**
 * Figures computed from request bodies the fake server recorded (bench/agent.bench.ts):
 * exact o200k size of a request, the unchanged prefix it shares with the previous one, and the
 * "full history" baseline — the same session as an agent that resends every earlier message and
 * tool output verbatim would have sent it, rebuilt from the session transcript.
 */
import type { FunctionToolSpec, InputItem, ModelRequest } from "../../../src/model/types.ts";
import { countRequest, toolText } from "../../../src/prompt/request-assembly.ts";
import type { TranscriptRecord } from "../../../src/session/transcript-schema.ts";

export type Count = (text: string) => number;
export type RequestShape = Pick<ModelRequest, "instructions" | "input" | "tools">;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function str(value: unknown, what: string): string {
  if (typeof value !== "string") throw new Error(`recorded request: ${what} is not a string`);
  return value;
}

function inputItem(value: unknown, i: number): InputItem {
  if (!isObject(value)) throw new Error(`recorded request: input[${i}] is not an object`);
  const type = value.type ?? "message";
  if (type === "message") {
    const role = str(value.role, `input[${i}].role`);
    if (role !== "user" && role !== "assistant" && role !== "developer" && role !== "system") throw new Error(`input[${i}]: role ${role}`);
    return { type: "message", role, content: str(value.content, `input[${i}].content`) };
  }
  if (type === "function_call") {
    return { type, call_id: str(value.call_id, "call_id"), name: str(value.name, "name"), arguments: str(value.arguments, "arguments") };
  }
  if (type === "function_call_output") return { type, call_id: str(value.call_id, "call_id"), output: str(value.output, "output") };
  throw new Error(`recorded request: input[${i}] has type ${String(type)}`);
}

/** The parts of a recorded body the model reads, narrowed from JSON. */
export function requestShape(body: Record<string, unknown>): RequestShape {
  const input = Array.isArray(body.input) ? body.input.map(inputItem) : [];
  const tools = (Array.isArray(body.tools) ? body.tools : []).filter(isObject).map(
    (t): FunctionToolSpec => ({
      type: "function",
      name: str(t.name, "tool name"),
      description: str(t.description, "tool description"),
      parameters: isObject(t.parameters) ? t.parameters : {},
      strict: t.strict === true,
    }),
  );
  return { instructions: typeof body.instructions === "string" ? body.instructions : "", input, tools };
}

/** Tokens the model reads: every tool definition, the instructions, each input item, framing. */
export function requestTokens(request: RequestShape, count: Count): number {
  return countRequest(request, count);
}

/** The request as one string in the order the API caches it: tools, instructions, input items. */
export function cacheOrderText(request: RequestShape): string {
  const parts = request.tools.map((t) => `${toolText(t)}\n`);
  parts.push(`${request.instructions}\n`);
  for (const item of request.input) parts.push(`${JSON.stringify(item)}\n`);
  return parts.join("");
}

function commonPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i + 512 <= n && a.slice(i, i + 512) === b.slice(i, i + 512)) i += 512;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/**
 * Tokens of `next` that are a byte-identical prefix of `previous` (serialized in cache order),
 * counted with o200k; and `next`'s total counted the same way.
 */
export function sharedPrefix(previous: RequestShape | undefined, next: RequestShape, count: Count): { prefix: number; total: number } {
  const text = cacheOrderText(next);
  const total = count(text);
  if (!previous) return { prefix: 0, total };
  const shared = commonPrefix(cacheOrderText(previous), text);
  return { prefix: shared === text.length ? total : count(text.slice(0, shared)), total };
}

/** One model call of the session, as the transcript tells it. */
export interface CallRef {
  turn: number;
  step: number;
}

/** The main-turn model calls in order: steps 1..n of each turn (n from turn_end). */
export function callsOf(records: readonly TranscriptRecord[]): CallRef[] {
  return records.flatMap((r) => (r.kind === "turn_end" ? Array.from({ length: r.steps }, (_, i) => ({ turn: r.turn, step: i + 1 })) : []));
}

/**
 * The input a full-history agent sends for `call`: every earlier turn verbatim (user message,
 * assistant texts, each tool call with the output the model saw), then this turn up to the step.
 */
export function fullHistoryInput(records: readonly TranscriptRecord[], call: CallRef): InputItem[] {
  const items: InputItem[] = [];
  for (const r of records) {
    if (!("turn" in r) || r.turn === undefined) continue;
    if (r.turn > call.turn) break;
    const earlierStep = r.turn < call.turn || ("step" in r && r.step < call.step);
    if (r.kind === "user") items.push({ type: "message", role: "user", content: r.text });
    else if (r.kind === "assistant" && earlierStep && r.text !== "") items.push({ type: "message", role: "assistant", content: r.text });
    else if (r.kind === "tool_call" && earlierStep) {
      items.push({ type: "function_call", call_id: r.call_id, name: r.name, arguments: r.arguments });
      items.push({ type: "function_call_output", call_id: r.call_id, output: r.output });
    }
  }
  return items;
}
