/**
 * `chat -p --output-format stream-json` (`--json`): one JSON object per line for every AgentEvent,
 * in order, each carrying the stream's schema version `v` first (docs/schemas/event-stream.schema.json).
 * Events are plain data (an approval is answered by its id, not through a callback), so each is
 * printed whole.
 */
import type { AgentEvent } from "../agent/events.ts";
import { EVENT_STREAM_VERSION } from "../agent/event-schema.ts";

export function eventToJsonLine(event: AgentEvent): string {
  return jsonForTerminal({ v: EVENT_STREAM_VERSION, ...event });
}

/**
 * JSON.stringify, with DEL, C1 controls (U+0080–U+009F, among them the one-byte CSI) and bidi
 * controls written as \uXXXX escapes too: JSON.stringify escapes only C0, and a line of JSON is
 * often read in a terminal. So are U+2028 and U+2029: valid in JSON, but line breaks to readers
 * that split lines on them (Python's str.splitlines), which would cut one event in two. The value
 * parses back identical.
 */
export function jsonForTerminal(value: unknown, indent?: number): string {
  return JSON.stringify(value, null, indent).replace(/[\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

export function createJsonPrinter(write: (line: string) => void): (event: AgentEvent) => void {
  return (event) => write(`${eventToJsonLine(event)}\n`);
}
