/** `chat -p --json`: an approval request prints as valid JSON with what the dialog would show, minus its callback. */
import { describe, expect, test } from "bun:test";
import { eventToJsonLine } from "../../src/ui/print-json.ts";

describe("eventToJsonLine", () => {
  test("approval_request keeps warning and remember, drops respond", () => {
    const line = eventToJsonLine({
      type: "approval_request",
      callId: "c1",
      name: "run_shell",
      description: "run `git diff HEAD~1`",
      warning: "writes a git hook",
      remember: { kind: "command", exact: "git diff HEAD~1", prefix: "git diff" },
      respond: () => undefined,
    });
    expect(JSON.parse(line)).toEqual({
      type: "approval_request",
      callId: "c1",
      name: "run_shell",
      description: "run `git diff HEAD~1`",
      warning: "writes a git hook",
      remember: { kind: "command", exact: "git diff HEAD~1", prefix: "git diff" },
    });
  });
});
