/**
 * `chat -p --output-format json`: the one object printed on stdout when the run ends, success or
 * failure. Field names follow Claude Code's result object where the meaning is the same (`type`,
 * `subtype`, `is_error`, `result`, `session_id`, `num_turns`, `duration_ms`, `usage`,
 * `total_cost_usd`, `permission_denials`), so scripts written for it port with few changes.
 * Published as docs/schemas/result.schema.json (src/schema/output-schemas-build.ts).
 */
import { Type, type Static } from "@sinclair/typebox";
import { ErrorKindSchema, StopReasonSchema } from "./event-schema.ts";

/** The result object's schema version (`v`); changes only when a field is removed, renamed or changes meaning. */
export const RESULT_VERSION = 1;

const Count = Type.Integer({ minimum: 0 });

export const ResultUsageSchema = Type.Object(
  {
    input_tokens: Type.Integer({ minimum: 0, description: "input tokens of the run's model calls (the turn's and the window fold's), cached ones included" }),
    cached_tokens: Type.Integer({ minimum: 0, description: "the part of input_tokens the provider served from its prompt cache" }),
    output_tokens: Type.Integer({ minimum: 0, description: "output tokens, reasoning included" }),
    reasoning_tokens: Type.Integer({ minimum: 0, description: "the part of output_tokens spent on reasoning" }),
    requests: Type.Integer({ minimum: 0, description: "model calls whose usage the API reported, fold (summary) requests included" }),
    cached_share: Type.Number({ minimum: 0, maximum: 1, description: "cached_tokens / input_tokens (0 without usage)" }),
    effective_input_tokens: Type.Integer({ minimum: 0, description: "uncached + 0.1 × cached input tokens: the input's cost in fresh-token terms" }),
    fold: Type.Object(
      {
        requests: Count,
        input_tokens: Count,
        cached_tokens: Count,
        output_tokens: Count,
      },
      { additionalProperties: false, description: "the part of the figures above spent folding the window into the summary: what the memory itself cost" },
    ),
  },
  { additionalProperties: false },
);

export const ResultErrorSchema = Type.Object(
  {
    kind: Type.Union([...ErrorKindSchema.anyOf, Type.Literal("usage")], {
      description: "an error event's kind (docs/agent.md), or usage: a bad flag, setting or input (exit 2)",
    }),
    message: Type.String(),
    hint: Type.Optional(Type.String({ description: "what to do" })),
  },
  { additionalProperties: false },
);

export const HeadlessResultSchema = Type.Object(
  {
    type: Type.Literal("result"),
    v: Type.Literal(RESULT_VERSION, { description: "the result object's schema version" }),
    subtype: Type.Union([Type.Literal("success"), Type.Literal("error_max_turns"), Type.Literal("error_during_execution")], {
      description: "success (exit 0); error_max_turns: the step limit was hit; error_during_execution: any other failure",
    }),
    is_error: Type.Boolean({ description: "true exactly when the exit code is not 0" }),
    result: Type.String({ description: "the final answer; after a failure the partial answer, often empty" }),
    stop_reason: Type.Union([StopReasonSchema, Type.Null()], { description: "the turn's stop reason; null when the turn did not run (a usage error)" }),
    error: Type.Union([ResultErrorSchema, Type.Null()], { description: "what failed; null on success" }),
    session_id: Type.Union([Type.String(), Type.Null()], { description: "for --resume; null when no session was opened" }),
    turn: Type.Union([Count, Type.Null()], { description: "the turn's number in the session" }),
    num_turns: Type.Integer({ minimum: 0, description: "model calls (agent steps) the turn made" }),
    duration_ms: Type.Integer({ minimum: 0, description: "from the start of the command to this object" }),
    usage: ResultUsageSchema,
    total_cost_usd: Type.Union([Type.Number({ minimum: 0 }), Type.Null()], { description: "the run's cost in US dollars; null when the model's prices are not known" }),
    permission_denials: Type.Array(
      Type.Object({ tool_name: Type.String(), tool_use_id: Type.String(), target: Type.String() }, { additionalProperties: false }),
      { description: "tool calls refused by the approval mode (headless cannot ask)" },
    ),
  },
  { additionalProperties: false },
);

export type HeadlessResult = Static<typeof HeadlessResultSchema>;
export type ResultError = Static<typeof ResultErrorSchema>;

export function resultJsonSchema(): Record<string, unknown> {
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    $id: "https://valarmind.dev/schemas/result.schema.json",
    title: "valarmind chat -p --output-format json: the result object",
    description: "The one JSON object chat -p --output-format json prints on stdout when the run ends, success or failure. Generated from src/agent/headless-result.ts.",
    ...(JSON.parse(JSON.stringify(HeadlessResultSchema)) as Record<string, unknown>),
  };
}
