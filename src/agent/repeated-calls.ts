/**
 * A model stuck in a loop: the same tool call (same tool, same arguments, whatever their order or
 * spacing) made again and again in a row within one turn. Each repeat costs a request that
 * re-sends the turn so far, and up to maxStepsPerTurn (24) of them ran before the step limit.
 *
 * The third such call in a row is not run: the model is told its result is already above and to
 * use it, change the call or answer. If it then makes the same call again in a later response,
 * the turn stops (error kind `loop`). Gemini CLI stops a turn on a run of identical calls;
 * OpenCode asks the user at the third (its doom_loop permission). A call with other calls between
 * its repeats (edit, then run the tests again) is no loop: any other call starts the count again.
 *
 *   const repeats = new RepeatedCalls();
 *   const verdict = repeats.next(call, step);   // "run" | "refuse" | "stop"
 */
import type { ToolCallRequest } from "../model/types.ts";

/** The call in a row that is not run. */
export const REFUSE_REPEAT_AT = 3;

export type RepeatVerdict = { kind: "run" } | { kind: "refuse"; inARow: number } | { kind: "stop"; inARow: number };

/** The call's identity: its name and its arguments with keys sorted (unparsable arguments as sent). */
export function callSignature(call: ToolCallRequest): string {
  let args: string;
  try {
    args = JSON.stringify(sortedKeys(JSON.parse(call.arguments || "{}")));
  } catch {
    args = call.arguments;
  }
  return `${call.name}\u0000${args}`;
}

function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (typeof value !== "object" || value === null) return value;
  const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(entries.map(([key, item]) => [key, sortedKeys(item)]));
}

export class RepeatedCalls {
  private last: string | undefined;
  private inARow = 0;
  /** The step in which the run was first refused: a repeat in a later response stops the turn. */
  private refusedAtStep: number | undefined;

  next(call: ToolCallRequest, step: number): RepeatVerdict {
    const signature = callSignature(call);
    if (signature === this.last) {
      this.inARow += 1;
    } else {
      this.last = signature;
      this.inARow = 1;
      this.refusedAtStep = undefined;
    }
    if (this.inARow < REFUSE_REPEAT_AT) return { kind: "run" };
    if (this.refusedAtStep !== undefined && step > this.refusedAtStep) return { kind: "stop", inARow: this.inARow };
    this.refusedAtStep ??= step;
    return { kind: "refuse", inARow: this.inARow };
  }
}

/** What the model is told instead of the result of a call it repeated. */
export function repeatedCallAnswer(name: string, inARow: number): string {
  return (
    `Not run: this is the same ${name} call, with the same arguments, ${inARow} times in a row; its result is above and would be the same. ` +
    `Use that result, change the call, or answer the user. The same call again stops this turn.`
  );
}
