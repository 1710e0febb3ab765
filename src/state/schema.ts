/**
 * The working state (`.valarmind/memory/state.json`): one TypeBox definition gives both the
 * TypeScript types and the JSON Schema (draft 2020-12) that ajv validates and `init` writes to
 * `.valarmind/memory/schemas/state.schema.json`. See docs/adr/0002-typebox-single-schema-source.md.
 */
import { Type, type Static, type TUnsafe } from "@sinclair/typebox";

import { STATE_SCHEMA_VERSION, TASK_STATUSES } from "./empty-state.ts";

export { emptyState, STATE_SCHEMA_VERSION, TASK_STATUSES, type TaskStatus } from "./empty-state.ts";

// A plain `enum` (rather than TypeBox's anyOf of consts) gives ajv one readable error.
function StringEnum<T extends readonly string[]>(values: T, options: Record<string, unknown> = {}): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ type: "string", enum: [...values], ...options });
}

const Text = (description: string) => Type.String({ minLength: 1, description });

export const DecisionSchema = Type.Object(
  {
    id: Type.String({ pattern: "^ADR-[0-9]{4,}$", description: "ADR-NNNN, assigned in order" }),
    title: Text("what was decided"),
    why: Type.String({ description: "the reason, in a sentence" }),
    ts: Type.String({ format: "date-time", description: "when it was decided" }),
  },
  { additionalProperties: false },
);

export const TaskSchema = Type.Object(
  {
    id: Type.String({ pattern: "^T-[0-9]+$", description: "T-N, assigned in order" }),
    title: Text("what the task is"),
    status: StringEnum(TASK_STATUSES, { description: "open, in_progress, blocked or done" }),
    updated_at: Type.String({ format: "date-time" }),
    note: Type.Optional(Type.String({ description: "latest note: progress, or why it is blocked" })),
    files: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { description: "files the task touches" })),
  },
  { additionalProperties: false },
);

export const BlockerSchema = Type.Object(
  {
    id: Type.String({ pattern: "^B-[0-9]+$", description: "B-N, assigned in order" }),
    text: Text("what blocks progress"),
    ts: Type.String({ format: "date-time", description: "when it was raised" }),
    task: Type.Optional(Type.String({ pattern: "^T-[0-9]+$", description: "the task it blocks, if any" })),
  },
  { additionalProperties: false },
);

export const StateSchema = Type.Object(
  {
    $schema: Type.Optional(Type.String({ description: "optional, for editors: ./schemas/state.schema.json" })),
    schema_version: Type.Literal(STATE_SCHEMA_VERSION, { description: "format version of this file" }),
    updated_at: Type.String({ format: "date-time", description: "last change, stamped by every write" }),
    goal: Type.String({ description: "the project's current objective" }),
    now: Type.String({ description: "what is being done right now" }),
    decisions_recent: Type.Array(DecisionSchema),
    tasks_open: Type.Array(TaskSchema, { description: "tasks; done ones stay until pruned" }),
    blockers: Type.Array(BlockerSchema),
    conventions: Type.Record(Type.String({ pattern: "^\\S(?:.*\\S)?$" }), Type.String(), {
      description: "repository conventions, name → rule",
      additionalProperties: false,
    }),
  },
  {
    $id: "urn:valarmind:schema:state",
    title: "valarmind working state",
    additionalProperties: false,
  },
);

export type WorkingState = Static<typeof StateSchema>;
export type Decision = Static<typeof DecisionSchema>;
export type Task = Static<typeof TaskSchema>;
export type Blocker = Static<typeof BlockerSchema>;

export const JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema";

/** The JSON Schema document as written to disk (TypeBox's symbols dropped, dialect stated). */
export function stateJsonSchema(): Record<string, unknown> {
  return { $schema: JSON_SCHEMA_DIALECT, ...(JSON.parse(JSON.stringify(StateSchema)) as Record<string, unknown>) };
}
