/**
 * What a finished tool call leaves in short-term memory (seed 002: the raw result stays in the
 * transcript). Short outputs are their own summary. Longer results of tools that declare a
 * working-set priority (a file, search hits, a command's output) stay whole in the window — as the
 * model saw them in the turn, so the turn enters the window as an exact append of what was sent
 * and stays cached (ADR 0074) — and become a working-set item when their turn folds out of the
 * window, where the overflow policy decides how long they stay in view. Other long outputs (errors,
 * denials, tools without a priority) are carried as a summary line.
 * Everything here comes from the outcome: the tool stated its own facts to the registry.
 */
import type { NewWorkingSetItem } from "./working-set.ts";
import type { ToolCallRequest } from "../model/types.ts";
import type { CallFacts } from "../tools/call-facts.ts";
import type { ToolCallOutcome } from "../tools/types.ts";

/** Outputs up to this many bytes are kept whole in the window. */
export const INLINE_OUTPUT_BYTES = 600;

export interface ToolMemory {
  /** What later prompts carry for this call in the conversation window. */
  promptSummary: string;
  /** A working-set item for long outputs of tools that keep them: added when the call's turn folds out of the window. */
  workingSetItem?: NewWorkingSetItem;
  /** The call's facts from its outcome, so the turn's memory need not look the tool up. */
  facts?: CallFacts;
}

function factsOf(outcome: ToolCallOutcome): CallFacts | undefined {
  if (outcome.kind === undefined) return undefined;
  const facts: CallFacts = { kind: outcome.kind, locations: outcome.locations };
  if (outcome.workingSetPriority !== undefined) facts.workingSetPriority = outcome.workingSetPriority;
  return facts;
}

export function toolMemory(call: ToolCallRequest, outcome: ToolCallOutcome): ToolMemory {
  const output = outcome.forModel;
  const facts = factsOf(outcome);
  const withFacts = (memory: ToolMemory): ToolMemory => (facts ? { ...memory, facts } : memory);
  if (Buffer.byteLength(output, "utf8") <= INLINE_OUTPUT_BYTES) return withFacts({ promptSummary: output });
  const priority = outcome.workingSetPriority;
  if (outcome.isError || outcome.denied || priority === undefined) {
    return withFacts({ promptSummary: `${outcome.summary}\n[full output in the session transcript; not repeated here]` });
  }
  const source = `${call.name} ${outcome.target}`.trim();
  return withFacts({ promptSummary: output, workingSetItem: { content: output, source, priority, tags: outcome.locations.map((l) => l.path) } });
}
