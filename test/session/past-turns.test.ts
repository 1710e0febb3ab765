import { describe, expect, test } from "bun:test";
import { pastTurnsOf, userWords } from "../../src/session/past-turns.ts";
import type { TranscriptRecord } from "../../src/session/transcript-schema.ts";

const ts = "2026-11-24T10:00:00.000Z";
const user = (turn: number, text: string): TranscriptRecord => ({ v: 1, kind: "user", ts, turn, text });
const answer = (turn: number, step: number, text: string): TranscriptRecord => ({ v: 1, kind: "assistant", ts, turn, step, text });
const end = (turn: number, stop: "completed" | "aborted" | "error" = "completed"): TranscriptRecord => ({ v: 1, kind: "turn_end", ts, turn, steps: 1, stop_reason: stop });
const call = (turn: number, output: string, isError = false): TranscriptRecord => ({
  v: 1,
  kind: "tool_call",
  ts,
  turn,
  step: 1,
  call_id: `c${turn}`,
  name: "run_shell",
  arguments: '{"command":"ls"}',
  output,
  summary: output,
  is_error: isError,
});

describe("userWords", () => {
  test("the words as typed, without the attachments, piped input and /undo note valarmind recorded with them", async () => {
    const { withAttachments, fileBlock } = await import("../../src/prompt/attachments.ts");
    const { withPipedInput } = await import("../../src/prompt/piped-input.ts");
    const { withUndoNote } = await import("../../src/checkpoints/undo-note.ts");
    const recorded = withUndoNote(withAttachments(withPipedInput("read @README.md please", "LOG"), [fileBlock("README.md", "# demo\n", 7)]), [{ kind: "undo", of_turn: 2, files: ["a.ts"] }]);
    expect(userWords(recorded)).toEqual({ words: "read @README.md please", added: ["README.md attached", "standard input", "a note about /undo"] });
    expect(userWords("plain words\n\nwith a gap")).toEqual({ words: "plain words\n\nwith a gap", added: [] });
  });
});

describe("pastTurnsOf", () => {
  test("each turn's message, answers and calls in order, and how it ended", () => {
    const earlier = pastTurnsOf([user(1, "list"), call(1, "a.ts"), answer(1, 2, "One file."), end(1), user(2, "again"), answer(2, 1, "Stopped"), end(2, "aborted")]);
    expect(earlier.total).toBe(2);
    expect(earlier.turns[0]).toEqual({
      turn: 1,
      user: "list",
      steps: [
        { kind: "tool", callId: "c1", name: "run_shell", arguments: '{"command":"ls"}', summary: "a.ts", isError: false, denied: false },
        { kind: "text", text: "One file." },
      ],
      stopReason: "completed",
    });
    expect(earlier.turns[1]?.stopReason).toBe("aborted");
  });

  test("a call the user refused is told apart from one that failed", () => {
    const earlier = pastTurnsOf([user(1, "x"), call(1, 'Denied: the user did not approve "run ls". Nothing was done.', true), end(1), user(2, "y"), call(2, "exit 1", true), end(2)]);
    const steps = earlier.turns.flatMap((t) => t.steps);
    expect(steps.map((s) => (s.kind === "tool" ? [s.isError, s.denied] : []))).toEqual([
      [true, true],
      [true, false],
    ]);
  });

  test("keeps the newest turns only, and counts them all; an unfinished turn has no stop reason", () => {
    const records = Array.from({ length: 5 }, (_, i) => [user(i + 1, `q${i + 1}`), answer(i + 1, 1, `a${i + 1}`), end(i + 1)]).flat();
    const earlier = pastTurnsOf([...records, user(6, "q6")], 3);
    expect(earlier.total).toBe(6);
    expect(earlier.turns.map((t) => t.user)).toEqual(["q4", "q5", "q6"]);
    expect(earlier.turns.at(-1)?.stopReason).toBeUndefined();
  });

  test("/undo marks the turn whose files it gave back; /redo clears the mark", () => {
    const undo = (of: number): TranscriptRecord => ({ v: 1, kind: "undo", ts, of_turn: of, files: ["a.ts"] });
    const redo = (of: number): TranscriptRecord => ({ v: 1, kind: "redo", ts, of_turn: of, files: ["a.ts"] });
    expect(pastTurnsOf([user(1, "edit"), end(1), undo(1)]).turns[0]?.undone).toBe(true);
    expect(pastTurnsOf([user(1, "edit"), end(1), undo(1), redo(1)]).turns[0]?.undone).toBeUndefined();
  });

  test("blank answers are left out; a new session has nothing", () => {
    expect(pastTurnsOf([user(1, "x"), answer(1, 1, "  \n"), end(1)]).turns[0]?.steps).toEqual([]);
    expect(pastTurnsOf([])).toEqual({ turns: [], total: 0 });
  });
});
