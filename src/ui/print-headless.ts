/**
 * `chat -p`: the final answer on stdout; progress (tool calls, retries, errors) on stderr so a
 * script can capture the answer alone. Text is streamed as it arrives when stdout is a terminal.
 */
import type { AgentEvent } from "../agent/events.ts";

export interface HeadlessPrinterOptions {
  out: (text: string) => void;
  err: (text: string) => void;
  /** Stream deltas to `out` as they arrive (a terminal) rather than the final text at the end. */
  streamText: boolean;
  /** Print tool calls and retries to `err`. */
  verbose: boolean;
}

export function createHeadlessPrinter(options: HeadlessPrinterOptions): (event: AgentEvent) => void {
  let streamedAny = false;
  return (event) => {
    switch (event.type) {
      case "text_delta":
        if (options.streamText) {
          options.out(event.delta);
          streamedAny = true;
        }
        break;
      case "tool_call_start":
        if (options.verbose) options.err(`· ${event.name} ${event.target}\n`);
        break;
      case "tool_call_end":
        if (options.verbose || event.isError || event.denied) {
          const mark = event.denied ? "denied" : event.isError ? "failed" : "ok";
          options.err(`  ${event.name}: ${mark} — ${event.summary}\n`);
        }
        break;
      case "retry":
        options.err(`retrying in ${Math.ceil(event.delayMs / 1000)}s (attempt ${event.attempt}): ${event.reason}\n`);
        break;
      case "notice":
        options.err(`note: ${event.message}\n`);
        break;
      case "memory_updated":
        // A change made after reading repository content may have been asked for by that content.
        if (event.afterUntrusted) options.err(`memory changed after reading repository content: ${event.what}\n`);
        else if (options.verbose) options.err(`· memory: ${event.what}\n`);
        break;
      case "error":
        options.err(`error: ${event.message}\n`);
        if (event.hint) options.err(`  ${event.hint}\n`);
        break;
      case "turn_end":
        if (options.streamText) {
          if (streamedAny && !event.text.endsWith("\n")) options.out("\n");
        } else if (event.text.length > 0) {
          options.out(event.text.endsWith("\n") ? event.text : `${event.text}\n`);
        }
        break;
      default:
        break;
    }
  };
}
