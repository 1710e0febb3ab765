/**
 * A JSONL script for the fake server (used by `scripts/fake-server.ts`): one answer per line, in
 * request order. Blank lines and lines starting with `#` are skipped.
 *
 *   {"text": "Hello"}                                                    a text answer
 *   {"text": "Reading it.", "tool_calls": [{"name": "read_file", "arguments": {"path": "a.ts"}}]}
 *   {"reasoning": ["**Plan**\n\nRead first."], "text": "Done."}          reasoning summary, then text
 *   {"fixture": "text_stream.sse"}                                       a recorded stream
 *   {"status": 429, "fixture": "error_429", "headers": {"retry-after": "1"}}   HTTP error from fixtures
 *   {"status": 500, "message": "boom"}                                   HTTP error, built
 *   {"failed": "context_length_exceeded", "message": "too long"}         failure inside a 200 stream
 * Stream lines also take "cut_after": N (end the body after N events), "incomplete": "<reason>",
 * "usage": {"input_tokens", "cached_tokens", "output_tokens", "reasoning_tokens"}.
 */
import { readFileSync } from "node:fs";
import {
  builtStream,
  cutAfter,
  failedStream,
  fixtureError,
  fixtureStream,
  httpError,
  type FakeResponse,
  type StreamResponse,
} from "./fake-responses.ts";
import type { FakeToolCall, UsageSpec } from "./sse-script.ts";

const KNOWN = new Set(["text", "tool_calls", "reasoning", "fixture", "status", "headers", "message", "failed", "cut_after", "incomplete", "usage"]);

export interface ScriptLine {
  /** 1-based line number in the file, for messages. */
  line: number;
  spec: Record<string, unknown>;
}

export function readScriptFile(file: string): ScriptLine[] {
  const lines = readFileSync(file, "utf8").split("\n");
  const out: ScriptLine[] = [];
  lines.forEach((text, i) => {
    const trimmed = text.trim();
    if (trimmed === "" || trimmed.startsWith("#")) return;
    let spec: unknown;
    try {
      spec = JSON.parse(trimmed);
    } catch {
      throw new Error(`${file}:${i + 1}: not valid JSON`);
    }
    if (typeof spec !== "object" || spec === null || Array.isArray(spec)) throw new Error(`${file}:${i + 1}: expected a JSON object`);
    const unknown = Object.keys(spec).filter((key) => !KNOWN.has(key));
    if (unknown.length > 0) throw new Error(`${file}:${i + 1}: unknown keys ${unknown.join(", ")} (known: ${[...KNOWN].join(", ")})`);
    out.push({ line: i + 1, spec: spec as Record<string, unknown> });
  });
  return out;
}

function strings(value: unknown): string[] | undefined {
  return Array.isArray(value) && value.every((v) => typeof v === "string") ? value : undefined;
}

function toolCalls(value: unknown, where: string): FakeToolCall[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) throw new Error(`${where}: tool_calls must be a list`);
  return value.map((call: unknown) => {
    const c = call as { name?: unknown; arguments?: unknown };
    if (typeof c?.name !== "string") throw new Error(`${where}: every tool call needs a "name"`);
    const args = typeof c.arguments === "string" ? c.arguments : ((c.arguments ?? {}) as Record<string, unknown>);
    return { name: c.name, arguments: args };
  });
}

/** Turns one script line into an answer; `request` is the body being answered (echoed in the stream). */
export function scriptLineToResponse(entry: ScriptLine, request: Record<string, unknown>, usage?: UsageSpec): FakeResponse {
  const { spec } = entry;
  const where = `script line ${entry.line}`;
  const headers = (spec.headers ?? {}) as Record<string, string>;
  if (typeof spec.status === "number") {
    if (typeof spec.fixture === "string") return fixtureError(spec.fixture.replace(/\.json$/, ""), { status: spec.status, headers });
    return httpError(spec.status, { message: String(spec.message ?? `HTTP ${spec.status} from the fake server`), type: "server_error" }, headers);
  }
  let stream: StreamResponse;
  if (typeof spec.fixture === "string") stream = fixtureStream(spec.fixture);
  else if (typeof spec.failed === "string") stream = failedStream(spec.failed, String(spec.message ?? spec.failed));
  else {
    stream = builtStream({
      text: typeof spec.text === "string" ? spec.text : undefined,
      toolCalls: toolCalls(spec.tool_calls, where),
      reasoningSummary: strings(spec.reasoning),
      usage: (spec.usage as UsageSpec | undefined) ?? usage,
      ...(typeof spec.incomplete === "string" ? { status: "incomplete" as const, incompleteReason: spec.incomplete } : {}),
      request,
    });
  }
  return typeof spec.cut_after === "number" ? cutAfter(stream, spec.cut_after) : stream;
}
