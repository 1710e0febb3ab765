/**
 * The runtime constants of the working state and the empty state, kept apart from schema.ts so
 * the hot paths (store, ops, compact) do not load TypeBox (~10 ms). schema.ts re-exports them.
 */
import type { WorkingState } from "./schema.ts";

/** Bump with a migration in `migrations.ts` whenever the shape of state.json changes. */
export const STATE_SCHEMA_VERSION = 1;

export const TASK_STATUSES = ["open", "in_progress", "blocked", "done"] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

export function emptyState(now: Date = new Date()): WorkingState {
  return {
    schema_version: STATE_SCHEMA_VERSION,
    updated_at: now.toISOString(),
    goal: "",
    now: "",
    decisions_recent: [],
    tasks_open: [],
    blockers: [],
    conventions: {},
  };
}
