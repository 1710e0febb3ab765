/**
 * `chat -p --json`: one JSON object per line for every AgentEvent, in order. Events are plain
 * data (an approval is answered by its id, not through a callback), so each is printed whole.
 */
import type { AgentEvent } from "../agent/events.ts";

export function eventToJsonLine(event: AgentEvent): string {
  return JSON.stringify(event);
}

export function createJsonPrinter(write: (line: string) => void): (event: AgentEvent) => void {
  return (event) => write(`${eventToJsonLine(event)}\n`);
}
