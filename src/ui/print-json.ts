/**
 * `chat -p --json`: one JSON object per line for every AgentEvent, in order. Callbacks
 * (an approval's `respond`) are not serialisable and are left out.
 */
import type { AgentEvent } from "../agent/events.ts";

export function eventToJsonLine(event: AgentEvent): string {
  if (event.type === "approval_request") {
    const { respond: _respond, ...rest } = event;
    return JSON.stringify(rest);
  }
  return JSON.stringify(event);
}

export function createJsonPrinter(write: (line: string) => void): (event: AgentEvent) => void {
  return (event) => write(`${eventToJsonLine(event)}\n`);
}
