/**
 * The `AgentEvent` union (events.ts) as a TypeBox schema: the source of the published JSON Schema
 * of `chat -p --output-format stream-json` (docs/schemas/event-stream.schema.json, written by
 * src/schema/output-schemas-build.ts). events.ts stays the hand-written union the code reads; the
 * type check at the end of this file fails to compile when the two differ, so adding an event, a
 * field, an error kind or a notice code means adding it here too (and regenerating the file).
 */
import { Type, type Static, type TSchema } from "@sinclair/typebox";
import type { AgentEvent } from "./events.ts";

/**
 * The stream's schema version, on every line as `v`. It changes only when a field is removed or
 * renamed or changes meaning; new event types, fields and codes can appear within a version.
 */
export const EVENT_STREAM_VERSION = 1;

const Count = Type.Integer({ minimum: 0 });

const ModelErrorKind = Type.Union([
  Type.Literal("no_api_key"),
  Type.Literal("auth"),
  Type.Literal("rate_limit"),
  Type.Literal("quota"),
  Type.Literal("server"),
  Type.Literal("connection"),
  Type.Literal("stream_cut"),
  Type.Literal("context_length_exceeded"),
  Type.Literal("bad_request"),
  Type.Literal("failed"),
  Type.Literal("aborted"),
]);

/**
 * An `error` event's kind: a model error kind (docs/agent.md, "Model errors"), budget, tool,
 * internal, max_steps (the turn hit maxStepsPerTurn) or loop (the model repeated one call).
 */
export const ErrorKindSchema = Type.Union([
  ...ModelErrorKind.anyOf,
  Type.Literal("budget"),
  Type.Literal("tool"),
  Type.Literal("internal"),
  Type.Literal("max_steps"),
  Type.Literal("loop"),
]);

export const StopReasonSchema = Type.Union([Type.Literal("completed"), Type.Literal("incomplete"), Type.Literal("error"), Type.Literal("aborted"), Type.Literal("max_steps")]);

function event<T extends string, P extends Record<string, TSchema>>(type: T, description: string, properties: P) {
  return Type.Object({ type: Type.Literal(type), ...properties }, { additionalProperties: false, description });
}

const SessionRemember = Type.Union([
  Type.Object({ kind: Type.Literal("tool"), tool: Type.String() }, { additionalProperties: false, description: "every later call of this tool, except calls that carry a warning" }),
  Type.Object(
    { kind: Type.Literal("command"), exact: Type.String(), prefix: Type.Optional(Type.String()) },
    { additionalProperties: false, description: "run_shell: this exact command line, and the prefix later commands may extend" },
  ),
]);

export const NoticeCodeSchema = Type.Union([
  Type.Literal("untrusted_project_settings"),
  Type.Literal("instruction_file_refused"),
  Type.Literal("sandbox_unavailable"),
  Type.Literal("state_moved_aside"),
  Type.Literal("session_forked"),
  Type.Literal("session_busy"),
  Type.Literal("transcript_damaged"),
  Type.Literal("mcp_server_failed"),
  Type.Literal("mcp_tools_left_out"),
  Type.Literal("attachment_not_attached"),
  Type.Literal("attachment_shortened"),
]);

export const UsageSchema = Type.Object(
  { input: Count, cached: Count, output: Count, reasoning: Count },
  { additionalProperties: false, description: "the API's usage for one model call; cached is the part of input served from the provider's cache" },
);

export const AgentEventSchema = Type.Union([
  event("session_start", "the first message of a new session, or (headless) a resumed one", {
    sessionId: Type.String(),
    transcriptPath: Type.String(),
    resumed: Type.Boolean(),
  }),
  event("turn_start", "the user's message is on disk", { turn: Count, userText: Type.String() }),
  event("request_built", "before each model call", {
    turn: Count,
    step: Count,
    manifest: Type.Object(
      { path: Type.String(), totalTokens: Count, budgetTokens: Count, stablePrefixTokens: Count },
      { additionalProperties: false, description: "the manifest written for this model call" },
    ),
  }),
  event("text_delta", "answer text as it streams", { delta: Type.String() }),
  event("reasoning_delta", "reasoning summary text as it streams", { delta: Type.String() }),
  event("tool_call_start", "before a tool runs", { callId: Type.String(), name: Type.String(), target: Type.String() }),
  event("approval_request", "interactive only: answered by id with answer(id, decision)", {
    id: Type.String(),
    callId: Type.String(),
    name: Type.String(),
    description: Type.String(),
    diff: Type.Optional(Type.String()),
    command: Type.Optional(Type.String({ description: "run_shell: the whole command, when the one-line description shows only its start" })),
    warning: Type.Optional(Type.String({ description: "why the call asks even where the approval mode would allow it" })),
    remember: Type.Optional(SessionRemember),
  }),
  event("tool_call_end", "after the tool ran, was refused or failed", {
    callId: Type.String(),
    name: Type.String(),
    summary: Type.String(),
    diff: Type.Optional(Type.String()),
    isError: Type.Boolean(),
    denied: Type.Boolean(),
  }),
  event("usage", "after each model call", {
    usage: UsageSchema,
    cachedShare: Type.Number({ minimum: 0, maximum: 1 }),
    purpose: Type.Optional(Type.Literal("fold", { description: "a fold (summary) request of the window, not a step of the turn" })),
  }),
  event("retry", "before a retry wait (429, 5xx, a context-overflow fold)", { attempt: Count, delayMs: Count, reason: Type.String() }),
  event("memory_updated", "a memory tool changed state.json; afterUntrusted: after this turn read repository content", {
    what: Type.String(),
    afterUntrusted: Type.Boolean(),
  }),
  event("notice", "something to know that is not an error; notices a script may act on carry a code", {
    message: Type.String(),
    code: Type.Optional(NoticeCodeSchema),
  }),
  event("window_slid", "the settle step: the window's older half folded into the summary", { foldedTurns: Count, summaryTokens: Count }),
  event("error", "a model, budget, tool or internal error; the message says what to do", {
    kind: ErrorKindSchema,
    message: Type.String(),
    hint: Type.Optional(Type.String()),
  }),
  event("turn_end", "the last event of a turn: text is the final answer", {
    turn: Count,
    text: Type.String(),
    stopReason: StopReasonSchema,
  }),
]);

/**
 * The published schema of one stream line: each event with `v` (EVENT_STREAM_VERSION) first.
 * Built from AgentEventSchema as plain JSON, so the file shows what a line holds.
 */
export function eventStreamJsonSchema(): Record<string, unknown> {
  const events = JSON.parse(JSON.stringify(AgentEventSchema)) as { anyOf: Array<{ properties: Record<string, unknown>; required: string[] }> };
  const lines = events.anyOf.map((member) => ({
    ...member,
    properties: { v: { const: EVENT_STREAM_VERSION, description: "the event stream's schema version" }, ...member.properties },
    required: ["v", ...member.required],
  }));
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    $id: "https://valarmind.dev/schemas/event-stream.schema.json",
    title: "valarmind chat -p --output-format stream-json: one line",
    description: `Each line of stdout is one JSON object: an agent event with the stream's schema version v (${EVENT_STREAM_VERSION}). New event types, fields and codes may appear within a version; ignore what you do not know. Generated from src/agent/event-schema.ts.`,
    anyOf: lines,
  };
}

// Compile-time drift check: the schema's static type and AgentEvent must be the same union.
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type ByType<U, K> = U extends { type: K } ? U : never;
type MemberCheck<K extends AgentEvent["type"]> = Same<{ [P in keyof ByType<AgentEvent, K>]: ByType<AgentEvent, K>[P] }, { [P in keyof ByType<Static<typeof AgentEventSchema>, K>]: ByType<Static<typeof AgentEventSchema>, K>[P] }>;
/** The event types whose fields differ (a compile error below names them as `Mismatched`) between events.ts and the schema (never when they agree). */
type Mismatched = { [K in AgentEvent["type"]]: MemberCheck<K> extends true ? never : K }[AgentEvent["type"]];
const eventsMatchSchema: [[Mismatched] extends [never] ? "same" : Mismatched, Same<AgentEvent["type"], Static<typeof AgentEventSchema>["type"]>] = ["same", true];
void eventsMatchSchema;
