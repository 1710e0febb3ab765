/**
 * The session transcript format: `.valarmind/sessions/<time>-<id>.jsonl`, one JSON record per
 * line, append-only, every line versioned (`v`). One TypeBox definition gives the types and the
 * compiled validator. A reader meets records in this order: one `session` header, then per turn
 * `user`, its `turn_context`, any number of `assistant` / `reasoning` / `tool_call` (one per model step), `turn_end`; `summary`
 * (a window fold), `working_set` (snapshot), `note`, `undo` and `redo` records may appear between turns.
 */
import { Type, type Static, type TSchema } from "@sinclair/typebox";

/** Bump with a reader-side migration whenever a record's shape changes. */
export const TRANSCRIPT_VERSION = 1;

const V = Type.Literal(TRANSCRIPT_VERSION);
const Ts = Type.String({ minLength: 1, description: "ISO 8601 time the record was written" });
const Turn = Type.Integer({ minimum: 1 });
const Tokens = Type.Integer({ minimum: 0, description: "exact o200k count, stored so resume never re-counts" });

function record<K extends string, P extends Record<string, TSchema>>(kind: K, props: P) {
  return Type.Object({ v: V, kind: Type.Literal(kind), ts: Ts, ...props }, { additionalProperties: false });
}

export const SessionHeaderSchema = record("session", {
  id: Type.String({ pattern: "^[a-z0-9]{4,32}$" }),
  started_at: Ts,
  cwd: Type.String(),
  model: Type.String(),
  valarmind: Type.String({ description: "version that started the session" }),
});

export const UserRecordSchema = record("user", { turn: Turn, text: Type.String(), tokens: Type.Optional(Tokens) });

export const AssistantRecordSchema = record("assistant", {
  turn: Turn,
  step: Type.Integer({ minimum: 1 }),
  text: Type.String(),
  tokens: Type.Optional(Tokens),
});

export const ToolCallRecordSchema = record("tool_call", {
  turn: Turn,
  step: Type.Integer({ minimum: 1 }),
  call_id: Type.String({ minLength: 1 }),
  name: Type.String({ minLength: 1 }),
  /** The raw JSON argument string as the model produced it. */
  arguments: Type.String(),
  /** What the model saw as the function output in this turn (after central truncation). */
  output: Type.String(),
  /** What later prompts carry instead of `output` once the turn is in the window. */
  summary: Type.String(),
  /** The tool's full result when it differs from `output` (kept on disk, never re-sent). */
  raw: Type.Optional(Type.String()),
  is_error: Type.Boolean(),
  tokens: Type.Optional(
    Type.Object(
      { call: Tokens, output: Tokens, summary: Tokens },
      { additionalProperties: false, description: "call = name + arguments" },
    ),
  ),
});

/**
 * What the model reasoned in step `step` before its tool calls, as it streamed it (written before
 * the step's `tool_call` records). The chat wire sends it back with those calls while the turn is
 * in the window (DeepSeek's thinking mode refuses a request without it). Added within version 1:
 * an older valarmind skips it as a damaged line.
 */
export const ReasoningRecordSchema = record("reasoning", {
  turn: Turn,
  step: Type.Integer({ minimum: 1 }),
  text: Type.String(),
  tokens: Type.Optional(Tokens),
});

export const UsageSchema = Type.Object(
  {
    input: Type.Integer({ minimum: 0 }),
    cached: Type.Integer({ minimum: 0 }),
    output: Type.Integer({ minimum: 0 }),
    reasoning: Type.Integer({ minimum: 0 }),
  },
  { additionalProperties: false },
);

export const TurnEndRecordSchema = record("turn_end", {
  turn: Turn,
  steps: Type.Integer({ minimum: 0 }),
  stop_reason: Type.Union([
    Type.Literal("completed"),
    Type.Literal("incomplete"),
    Type.Literal("error"),
    Type.Literal("aborted"),
    Type.Literal("max_steps"),
  ]),
  usage: Type.Optional(UsageSchema),
});

/** The window's oldest turns `from_turn..through_turn` were folded into `text`, the new rolling summary. */
export const SummaryRecordSchema = record("summary", {
  from_turn: Turn,
  through_turn: Turn,
  text: Type.String(),
  tokens: Type.Optional(Tokens),
  summarizer: Type.String({ minLength: 1 }),
  reason: Type.Union([Type.Literal("window_full"), Type.Literal("budget"), Type.Literal("cost")]),
});

export const WorkingSetItemSchema = Type.Object(
  {
    id: Type.String({ minLength: 1 }),
    content: Type.String(),
    source: Type.String({ minLength: 1 }),
    priority: Type.Number({ minimum: 0, maximum: 1 }),
    tags: Type.Array(Type.String()),
    tokens: Tokens,
    added_turn: Type.Integer({ minimum: 0 }),
    accessed_turn: Type.Integer({ minimum: 0 }),
    added_at: Ts,
    accessed_at: Ts,
  },
  { additionalProperties: false },
);

/** The working set as it stood at the end of `turn` (written when it changed). */
export const WorkingSetRecordSchema = record("working_set", {
  turn: Type.Integer({ minimum: 0 }),
  items: Type.Array(WorkingSetItemSchema),
});

/** Something a reader of the transcript should know: a model error, a recovered torn line. */
export const NoteRecordSchema = record("note", {
  turn: Type.Optional(Type.Integer({ minimum: 0 })),
  what: Type.String({ minLength: 1 }),
  text: Type.String(),
});

/**
 * The working state as the cached part of the prompt shows it (ADR 0063): taken when a session
 * starts and whenever the window's settled part changes; changes since then are sent separately.
 */
export const StateSnapshotRecordSchema = record("state_snapshot", {
  turn: Type.Integer({ minimum: 0 }),
  state: Type.Record(Type.String(), Type.Unknown()),
});

/**
 * `/undo` or `valarmind undo` gave back the files of turn `of_turn` as they were before it (ADR 0081);
 * `files` are the paths it restored, removed or recreated. Added within version 1: an older
 * valarmind skips it as a damaged line (set aside, told once), losing nothing else.
 */
export const UndoRecordSchema = record("undo", {
  of_turn: Turn,
  files: Type.Array(Type.String({ minLength: 1 })),
  /** --force: files changed since the turn were overwritten. */
  forced: Type.Optional(Type.Boolean()),
});

/** `/redo` or `valarmind redo` wrote the files of turn `of_turn` again as that turn left them. */
export const RedoRecordSchema = record("redo", {
  of_turn: Turn,
  files: Type.Array(Type.String({ minLength: 1 })),
  forced: Type.Optional(Type.Boolean()),
});

/**
 * A turn's per-turn part (ADR 0074) as its first request sent it: the working-state changes and
 * volatile-context blocks, what the context showed (so later turns send only what changed), and
 * the state its changes showed. The window shows it with the turn, byte for byte, after a resume
 * too. Added within version 1: an older valarmind skips it as a damaged line.
 */
export const TurnContextRecordSchema = record("turn_context", {
  turn: Turn,
  state_changes: Type.String(),
  context: Type.String(),
  shown: Type.Object(
    {
      time: Type.Optional(Type.String()),
      git: Type.Optional(Type.Object({ head: Type.String(), changes: Type.Array(Type.String()) }, { additionalProperties: false })),
      files: Type.Optional(Type.Array(Type.String())),
      symbols: Type.Optional(Type.Array(Type.String())),
    },
    { additionalProperties: false },
  ),
  state: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
});

export const TranscriptRecordSchema = Type.Union([
  SessionHeaderSchema,
  UserRecordSchema,
  AssistantRecordSchema,
  ToolCallRecordSchema,
  ReasoningRecordSchema,
  TurnEndRecordSchema,
  SummaryRecordSchema,
  WorkingSetRecordSchema,
  NoteRecordSchema,
  StateSnapshotRecordSchema,
  UndoRecordSchema,
  RedoRecordSchema,
  TurnContextRecordSchema,
]);

export type SessionHeader = Static<typeof SessionHeaderSchema>;
export type UserRecord = Static<typeof UserRecordSchema>;
export type AssistantRecord = Static<typeof AssistantRecordSchema>;
export type ToolCallRecord = Static<typeof ToolCallRecordSchema>;
export type ReasoningRecord = Static<typeof ReasoningRecordSchema>;
export type TurnEndRecord = Static<typeof TurnEndRecordSchema>;
export type SummaryRecord = Static<typeof SummaryRecordSchema>;
export type WorkingSetItemData = Static<typeof WorkingSetItemSchema>;
export type WorkingSetRecord = Static<typeof WorkingSetRecordSchema>;
export type NoteRecord = Static<typeof NoteRecordSchema>;
export type StateSnapshotRecord = Static<typeof StateSnapshotRecordSchema>;
export type UndoRecord = Static<typeof UndoRecordSchema>;
export type RedoRecord = Static<typeof RedoRecordSchema>;
export type TurnContextRecord = Static<typeof TurnContextRecordSchema>;
export type TranscriptRecord = Static<typeof TranscriptRecordSchema>;
export type TranscriptKind = TranscriptRecord["kind"];

/** A record as a caller appends it: `v` and `ts` are stamped by the writer. */
export type NewRecord = TranscriptRecord extends infer R
  ? R extends TranscriptRecord
    ? Omit<R, "v" | "ts"> & { ts?: string }
    : never
  : never;
