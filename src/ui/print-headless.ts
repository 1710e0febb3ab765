/**
 * `chat -p`: the final answer on stdout; progress (tool calls, retries, errors) on stderr so a
 * script can capture the answer alone. Text is streamed as it arrives when stdout is a terminal.
 *
 * What reaches a terminal is made terminal-safe (./terminal-safe-text.ts): the answer when stdout
 * is one (`streamText`), the notes on stderr always. A piped answer stays byte for byte what the
 * model wrote: scripts rely on it.
 */
import type { AgentEvent } from "../agent/events.ts";
import { terminalSafe, terminalSafeLiteral, terminalSafeStream } from "./terminal-safe-text.ts";

export interface HeadlessPrinterOptions {
  out: (text: string) => void;
  err: (text: string) => void;
  /** Stream deltas to `out` as they arrive (a terminal) rather than the final text at the end. */
  streamText: boolean;
  /** Print tool calls and retries to `err`. */
  verbose: boolean;
  /**
   * Make the answer on `out` terminal-safe. Default `streamText`: the chat command streams exactly
   * when stdout is a terminal in text mode; a pipe or a file gets the answer unchanged.
   */
  safeOut?: boolean;
  /**
   * Make the notes on `err` terminal-safe. Default true: they quote repository data (file names,
   * command lines, error messages) and are read by people, never parsed by scripts.
   */
  safeErr?: boolean;
}

export function createHeadlessPrinter(options: HeadlessPrinterOptions): (event: AgentEvent) => void {
  let streamedAny = false;
  const safeOut = options.safeOut ?? options.streamText;
  const safeErr = options.safeErr ?? true;
  const prose = safeErr ? terminalSafe : (text: string) => text;
  /** Tool names and targets: every character shown, so no part of a command line can hide. */
  const literal = safeErr ? terminalSafeLiteral : (text: string) => text;
  const stream = safeOut ? terminalSafeStream() : undefined;
  return (event) => {
    switch (event.type) {
      case "text_delta":
        if (options.streamText) {
          const text = stream ? stream.write(event.delta) : event.delta;
          if (text !== "") options.out(text);
          streamedAny = true;
        }
        break;
      case "tool_call_start":
        if (options.verbose) options.err(`· ${literal(event.name)} ${literal(event.target)}\n`);
        break;
      case "tool_call_end":
        if (options.verbose || event.isError || event.denied) {
          const mark = event.denied ? "denied" : event.isError ? "failed" : "ok";
          options.err(`  ${literal(event.name)}: ${mark} — ${prose(event.summary)}\n`);
        }
        break;
      case "retry":
        options.err(`retrying in ${Math.ceil(event.delayMs / 1000)}s (attempt ${event.attempt}): ${prose(event.reason)}\n`);
        break;
      case "notice":
        options.err(`note: ${prose(event.message)}\n`);
        break;
      case "memory_updated":
        // A change made after reading repository content may have been asked for by that content.
        if (event.afterUntrusted) options.err(`memory changed after reading repository content: ${literal(event.what)}\n`);
        else if (options.verbose) options.err(`· memory: ${literal(event.what)}\n`);
        break;
      case "error":
        options.err(`error: ${prose(event.message)}\n`);
        if (event.hint) options.err(`  ${prose(event.hint)}\n`);
        break;
      case "turn_end":
        if (options.streamText) {
          const rest = stream ? stream.end() : "";
          if (rest !== "") options.out(rest);
          if (streamedAny && !event.text.endsWith("\n")) options.out("\n");
        } else if (event.text.length > 0) {
          const text = safeOut ? terminalSafe(event.text) : event.text;
          options.out(text.endsWith("\n") ? text : `${text}\n`);
        }
        break;
      default:
        break;
    }
  };
}
