/** `chat -p --json`: every line carries the stream's schema version; an approval request prints as valid JSON with what the dialog would show, answered by its id. */
import { describe, expect, test } from "bun:test";
import { eventToJsonLine } from "../../src/ui/print-json.ts";

describe("eventToJsonLine", () => {
  test("approval_request is plain data: id, warning and remember, printed whole", () => {
    const line = eventToJsonLine({
      type: "approval_request",
      id: "1/c1",
      callId: "c1",
      name: "run_shell",
      description: "run `git diff HEAD~1`",
      warning: "writes a git hook",
      remember: { kind: "command", exact: "git diff HEAD~1", prefix: "git diff" },
    });
    expect(JSON.parse(line)).toEqual({
      v: 1,
      type: "approval_request",
      id: "1/c1",
      callId: "c1",
      name: "run_shell",
      description: "run `git diff HEAD~1`",
      warning: "writes a git hook",
      remember: { kind: "command", exact: "git diff HEAD~1", prefix: "git diff" },
    });
  });

  test("the version comes first on every line, so `head -c` or a line reader sees it before the event", () => {
    expect(eventToJsonLine({ type: "text_delta", delta: "hi" })).toBe('{"v":1,"type":"text_delta","delta":"hi"}');
  });

  test("U+2028 and U+2029 are escaped: a reader splitting lines on them (Python's splitlines) still gets one event per line", () => {
    const delta = "one\u2028two\u2029three";
    const line = eventToJsonLine({ type: "text_delta", delta });
    expect(line).toBe('{"v":1,"type":"text_delta","delta":"one\\u2028two\\u2029three"}');
    expect(line.split(/[\n\u2028\u2029]/)).toHaveLength(1);
    expect((JSON.parse(line) as { delta: string }).delta).toBe(delta);
  });
});
