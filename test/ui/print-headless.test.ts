/** `chat -p` text output: terminal-safe on a terminal, byte for byte into a pipe; notes on stderr always safe. */
import { describe, expect, test } from "bun:test";
import type { AgentEvent } from "../../src/agent/events.ts";
import { createHeadlessPrinter, type HeadlessPrinterOptions } from "../../src/ui/print-headless.ts";

const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;
const ANSWER = "port \u001b]52;c;ZXZpbA==\u0007is \u001b[8m4173\u001b[0m \u202eok 日本 👍";

function print(events: AgentEvent[], options: Partial<HeadlessPrinterOptions>): { out: string; err: string } {
  let out = "";
  let err = "";
  const printer = createHeadlessPrinter({
    out: (text) => (out += text),
    err: (text) => (err += text),
    streamText: false,
    verbose: true,
    ...options,
  });
  for (const event of events) printer(event);
  return { out, err };
}

/** The answer in 3-character deltas (sequences cut across them), then turn_end. */
function answerEvents(text: string): AgentEvent[] {
  const events: AgentEvent[] = [{ type: "turn_start", turn: 1, userText: "q" }];
  for (let i = 0; i < text.length; i += 3) events.push({ type: "text_delta", delta: text.slice(i, i + 3) });
  events.push({ type: "turn_end", turn: 1, text, stopReason: "completed" });
  return events;
}

const NOTES: AgentEvent[] = [
  { type: "tool_call_start", callId: "c1", name: "read_file", target: "a\u001b]0;t\u0007.ts" },
  { type: "tool_call_end", callId: "c1", name: "read_file", summary: "no such file \u001b[2Ja\u202e.ts", isError: true, denied: false },
  { type: "notice", message: "skipped \u001b]52;c;eA==\u0007AGENTS.md" },
  { type: "memory_updated", what: "goal \u001b[8mset", afterUntrusted: true },
  { type: "retry", attempt: 1, delayMs: 1000, reason: "429 \u0007" },
  { type: "error", kind: "tool", message: "failed on \u001b[1;1Hx", hint: "see \u202ey" },
];

describe("headless text output", () => {
  test("on a terminal (streamed): the answer is made safe, sequences cut across deltas removed whole", () => {
    const { out } = print(answerEvents(ANSWER), { streamText: true });
    expect(out).toBe("port is 4173 <U+202E>ok 日本 👍\n");
    expect(out).not.toMatch(UNSAFE);
  });

  test("into a pipe: the answer is byte for byte what the model wrote", () => {
    const { out } = print(answerEvents(ANSWER), { streamText: false });
    expect(out).toBe(`${ANSWER}\n`);
  });

  test("notes on stderr: prose loses its sequences, names and targets show every character", () => {
    const { err } = print(NOTES, { streamText: false });
    expect(err).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
    expect(err).toContain("· read_file a␛]0;t␇.ts\n");
    expect(err).toContain("read_file: failed — no such file a<U+202E>.ts\n");
    expect(err).toContain("note: skipped AGENTS.md\n");
    expect(err).toContain("memory changed after reading repository content: goal ␛[8mset\n");
    expect(err).toContain("(attempt 1): 429 ␇\n");
    expect(err).toContain("error: failed on x\n  see <U+202E>y\n");
  });

  test("safeOut and safeErr can be set apart from streaming", () => {
    expect(print(answerEvents(ANSWER), { streamText: false, safeOut: true }).out).toBe("port is 4173 <U+202E>ok 日本 👍\n");
    expect(print(NOTES, { safeErr: false }).err).toContain("note: skipped \u001b]52;c;eA==\u0007AGENTS.md\n");
  });
});
