/**
 * `recall_turn`: an earlier turn of this session word for word, read from its transcript — the
 * user's message, the model's answers, each tool call as its name, arguments and summary line.
 * The window keeps long answers as their gist and folded turns only as summary lines (ADR 0087);
 * this gives the exact words back when the model needs them, at the price of one call.
 *
 * What it returns was written by the user, the model and the tools a repository steered, so it is
 * untrusted like a file (kind "read"): it needs no approval, and the turn loop treats what follows
 * it as read from outside.
 */
import { Type } from "@sinclair/typebox";
import { readSession } from "../session/transcript-read.ts";
import { pastTurnsOf, type PastTurn } from "../session/past-turns.ts";
import { defineTool } from "./define-tool.ts";
import { toolText } from "./descriptions.ts";
import type { Tool, ToolResult } from "./types.ts";

const RecallParams = Type.Object(
  {
    turn: Type.Integer({ minimum: 1 }),
  },
  { additionalProperties: false },
);

/** Where this session's transcript is, or undefined (no session: a listing, a test, `prompt --dry-run`). */
export type TranscriptSource = () => string | undefined;

function failure(message: string): ToolResult {
  return { forModel: message, summary: message, isError: true };
}

/** The turn as text: its message, then its steps in order. */
export function recalledText(turn: PastTurn): string {
  const lines: string[] = [`turn ${turn.turn}${turn.stopReason && turn.stopReason !== "completed" ? ` (${turn.stopReason})` : ""}, word for word from the transcript`, "user:", turn.user];
  for (const step of turn.steps) {
    if (step.kind === "text") lines.push("assistant:", step.text);
    else lines.push(`tool call ${step.name} ${step.arguments}: ${step.denied ? "denied" : step.isError ? `failed: ${step.summary}` : step.summary}`);
  }
  return lines.join("\n");
}

export function createRecallTurnTool(transcript: TranscriptSource = () => undefined): Tool {
  return defineTool({
    name: "recall_turn",
    description: toolText("recall_turn"),
    kind: "read",
    parameters: RecallParams,
    describe: (args) => `recall turn ${args.turn}`,
    execute: async (args) => {
      const file = transcript();
      if (file === undefined) return failure("this session keeps no transcript, so no earlier turn can be recalled");
      const { records } = readSession(file);
      const turns = pastTurnsOf(records, Number.POSITIVE_INFINITY).turns;
      const found = turns.find((t) => t.turn === args.turn);
      if (!found) {
        const numbers = turns.map((t) => t.turn);
        const range = numbers.length === 0 ? "none yet" : `${Math.min(...numbers)}–${Math.max(...numbers)}`;
        return failure(`no turn ${args.turn} in this session's transcript (turns held: ${range})`);
      }
      // The message as the model saw it (a custom command's expansion, its attachments), not as typed.
      const message = records.flatMap((r) => (r.kind === "user" && r.turn === args.turn ? [r.text] : [])).join("\n\n");
      const text = recalledText({ ...found, user: message === "" ? found.user : message });
      const words = text.split(/\s+/).length;
      return { forModel: text, summary: `recalled turn ${args.turn} (${words} words)`, isError: false };
    },
  });
}
