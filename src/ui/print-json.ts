/**
 * `chat -p --output-format stream-json` (`--json`): one JSON object per line for every AgentEvent,
 * in order, each carrying the stream's schema version `v` first (docs/schemas/event-stream.schema.json).
 * Events are plain data (an approval is answered by its id, not through a callback), so each is
 * printed whole.
 */
import type { AgentEvent } from "../agent/events.ts";
import { EVENT_STREAM_VERSION } from "../agent/event-schema.ts";

export function eventToJsonLine(event: AgentEvent): string {
  return JSON.stringify({ v: EVENT_STREAM_VERSION, ...event });
}

export function createJsonPrinter(write: (line: string) => void): (event: AgentEvent) => void {
  return (event) => write(`${eventToJsonLine(event)}\n`);
}
