/**
 * The prompt manifest: one JSON file per model call, saying what went into the request, what
 * each piece cost, why it is there, and what was left out and why. One TypeBox definition gives
 * the types and the JSON Schema that ajv validates on every write and read (manifest.ts).
 */
import { Type, type Static } from "@sinclair/typebox";

export const MANIFEST_VERSION = 1;

const Tokens = Type.Integer({ minimum: 0 });

export const ManifestItemSchema = Type.Object(
  {
    id: Type.String({ minLength: 1 }),
    type: Type.String({ minLength: 1, description: "core_rules, turn, working_state, working_set_item, tool, ..." }),
    region: Type.String({ minLength: 1 }),
    format: Type.String({ minLength: 1, description: "json, markdown, text, toon, items" }),
    placement: Type.Union([Type.Literal("tools"), Type.Literal("instructions"), Type.Literal("message"), Type.Literal("items")]),
    tokens: Tokens,
    stable: Type.Boolean(),
    reason: Type.String({ minLength: 1 }),
    detail: Type.Optional(Type.String()),
    hash: Type.String({ pattern: "^[0-9a-f]{16}$", description: "first 16 hex digits of the content's SHA-256" }),
  },
  { additionalProperties: false },
);

export const DroppedItemSchema = Type.Object(
  {
    id: Type.String({ minLength: 1 }),
    tokens: Tokens,
    reason: Type.String({ minLength: 1, description: "folded_into_summary, evicted, shortened_head_tail, duplicate, state_cap, section_error, budget_last_resort" }),
    detail: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

export const CutoffStepSchema = Type.Object(
  {
    step: Type.Union([
      Type.Literal("trim_state"),
      Type.Literal("fold_window"),
      Type.Literal("evict_working_set"),
      Type.Literal("shorten_tool_outputs"),
      Type.Literal("shorten_evicted_turns"),
      Type.Literal("trim_context"),
      Type.Literal("shorten_summary"),
      Type.Literal("drop_state"),
      Type.Literal("shorten_message"),
      Type.Literal("split_fold"),
      Type.Literal("restore_state"),
    ]),
    detail: Type.String(),
    tokens_before: Tokens,
    tokens_after: Tokens,
  },
  { additionalProperties: false },
);

export const ManifestUsageSchema = Type.Object(
  { input: Tokens, cached: Tokens, output: Tokens, reasoning: Tokens },
  { additionalProperties: false },
);

/** How this request compares with the previous one of the session (prefix-break.ts). */
export const ManifestPrefixSchema = Type.Object(
  {
    kind: Type.Union([Type.Literal("first"), Type.Literal("append"), Type.Literal("break")], {
      description: "append: repeats the previous request's history and adds to it; break: an earlier piece changed; first: nothing to compare with",
    }),
    compared_with: Type.String({ minLength: 1 }),
    reused_tokens: Tokens,
    predicted_cached_tokens: Tokens,
    first_changed: Type.Optional(
      Type.Object({ id: Type.String({ minLength: 1 }), region: Type.String({ minLength: 1 }), previous_id: Type.String({ minLength: 1 }), reason: Type.String({ minLength: 1 }) }, { additionalProperties: false }),
    ),
  },
  { additionalProperties: false },
);

export const ManifestSchema = Type.Object(
  {
    manifest_version: Type.Literal(MANIFEST_VERSION),
    timestamp: Type.String({ format: "date-time" }),
    session: Type.String({ minLength: 1 }),
    turn: Type.Integer({ minimum: 0 }),
    step: Type.Integer({ minimum: 1 }),
    purpose: Type.Union([Type.Literal("turn"), Type.Literal("summary")]),
    model: Type.String({ minLength: 1 }),
    budget_tokens: Tokens,
    total_tokens: Tokens,
    framing_tokens: Tokens,
    stable_prefix_tokens: Tokens,
    prompt_cache_key: Type.String({ minLength: 1 }),
    regions: Type.Array(Type.String()),
    items: Type.Array(ManifestItemSchema),
    dropped: Type.Array(DroppedItemSchema),
    cutoff_steps: Type.Array(CutoffStepSchema),
    memory_events: Type.Array(Type.Object({ type: Type.String({ minLength: 1 }) }, { additionalProperties: true })),
    /** `POST /responses/input_tokens` for this request (`valarmind prompt --tokens api`). */
    api_input_tokens: Type.Optional(Tokens),
    /** The prefix this request shares with the previous request of the session, and the first piece that differs. */
    prefix: Type.Optional(ManifestPrefixSchema),
    /** Filled in after the call from the API's usage. */
    usage: Type.Optional(ManifestUsageSchema),
  },
  { additionalProperties: false, $id: "https://valarmind.dev/schemas/manifest.schema.json", title: "valarmind prompt manifest" },
);

export type Manifest = Static<typeof ManifestSchema>;
export type ManifestItem = Static<typeof ManifestItemSchema>;
export type DroppedItem = Static<typeof DroppedItemSchema>;
export type CutoffStep = Static<typeof CutoffStepSchema>;
export type ManifestPrefix = Static<typeof ManifestPrefixSchema>;
export type CutoffStepName = CutoffStep["step"];
