/**
 * `echo "$log" | valarmind chat -p "explain"`: the piped text is appended to the message as data
 * (ADR 0077). The request comes first, as Codex does, so a cut of an over-budget message (its
 * middle) keeps the request and the end of a log; a note says what the block is, and the block
 * cannot close its tag or open another valarmind tag (`tagged`).
 */
import { promptText } from "./prompt-text.ts";
import { tagged } from "./section.ts";

export function withPipedInput(message: string, piped: string): string {
  const bytes = new TextEncoder().encode(piped).byteLength;
  const block = tagged("piped_input", piped, { source: "standard input", bytes });
  return `${message.trimEnd()}\n\n${promptText("piped-input-note")}\n${block}`.trimEnd();
}
