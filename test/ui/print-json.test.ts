/** `chat -p --json`: an approval request prints as valid JSON with what the dialog would show, answered by its id. */
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
      type: "approval_request",
      id: "1/c1",
      callId: "c1",
      name: "run_shell",
      description: "run `git diff HEAD~1`",
      warning: "writes a git hook",
      remember: { kind: "command", exact: "git diff HEAD~1", prefix: "git diff" },
    });
  });
});
