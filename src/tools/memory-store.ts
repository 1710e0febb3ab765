/**
 * What the memory tools need from the state store (`src/state/store.ts` StateStore satisfies it),
 * and how a store change becomes a tool result.
 */
import { describeError } from "../errors.ts";
import type { UpdateResult } from "../state/store.ts";
import type { OpResult } from "../state/ops.ts";
import type { WorkingState } from "../state/schema.ts";
import type { ToolResult } from "./types.ts";

export interface MemoryStore {
  read(): Promise<{ state: WorkingState; notices: string[] }>;
  update(mutate: (state: WorkingState) => OpResult | WorkingState): Promise<UpdateResult>;
}

/** Runs one op through the store; an op's refusal (unknown id, empty title) becomes an error the model can fix. */
export async function applyMemoryOp(store: MemoryStore, op: (state: WorkingState) => OpResult, retryHint: string): Promise<ToolResult> {
  let result: UpdateResult;
  try {
    result = await store.update(op);
  } catch (error) {
    const message = describeError(error);
    const hint = typeof error === "object" && error !== null && "hint" in error && typeof error.hint === "string" ? ` (${error.hint})` : "";
    return { forModel: `Error: the working state was not changed: ${message}${hint}. ${retryHint}`, summary: `memory: ${message}`, isError: true };
  }
  const notices = result.notices.length > 0 ? `\nNote: ${result.notices.join("\n")}` : "";
  if (!result.written) {
    return { forModel: `Working state unchanged: ${result.change}.${notices}`, summary: `memory: ${result.change}`, isError: false };
  }
  return {
    forModel: `Working state updated: ${result.change}.${notices}`,
    summary: `memory: ${result.change}`,
    isError: false,
    memoryChange: result.change,
  };
}

export function describeTasks(state: WorkingState): string {
  if (state.tasks_open.length === 0) return "There are no tasks yet.";
  return `Tasks: ${state.tasks_open.map((t) => `${t.id} (${t.status}) ${t.title}`).join("; ")}.`;
}
