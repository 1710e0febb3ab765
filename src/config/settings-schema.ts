import { DEFAULT_PROCESS_LIMIT } from "../sandbox/process-limit.ts";
import { Type, type Static } from "@sinclair/typebox";
import { McpOptionsSchema, McpServersSchema } from "../mcp/mcp-config.ts";
import { MAX_TIMER_MS } from "./env-milliseconds.ts";

/** An http(s) URL with a host, as `baseURL` must be (OPENAI_BASE_URL is checked the same way). */
export const HTTP_URL_PATTERN = "^[Hh][Tt][Tt][Pp][Ss]?://[^\\s/?#]+\\S*$";

/** One source for the settings' types, JSON Schema and defaults. API keys are never settings. */
const PRICE_FIELDS = {
  input: Type.Number({ minimum: 0, description: "USD per million fresh input tokens" }),
  cachedInput: Type.Optional(Type.Number({ minimum: 0, description: "USD per million cached input tokens (default: a tenth of input)" })),
  output: Type.Number({ minimum: 0, description: "USD per million output tokens" }),
};

export const SettingsSchema = Type.Object(
  {
    model: Type.String({ minLength: 1, pattern: "\\S", default: "gpt-5.5", description: "model name, as the server knows it" }),
    baseURL: Type.Optional(Type.String({ pattern: HTTP_URL_PATTERN, description: "API base URL, usually ending in /v1 (else OPENAI_BASE_URL)" })),
    wireApi: Type.Union([Type.Literal("responses"), Type.Literal("chat")], {
      default: "responses",
      description: "HTTP API of the server: 'responses' (POST /responses) or 'chat' (POST /chat/completions: llama.cpp, vLLM, Ollama, …)",
    }),
    reasoningEffort: Type.Union(
      [Type.Literal("none"), Type.Literal("minimal"), Type.Literal("low"), Type.Literal("medium"), Type.Literal("high")],
      { default: "medium", description: "reasoning effort for reasoning models; 'none' omits it" },
    ),
    maxContextTokens: Type.Integer({ minimum: 1000, default: 24000, description: "MAX_CONTEXT_TOKENS: budget per request" }),
    contextWindow: Type.Optional(
      Type.Integer({ minimum: 1000, description: "the model's context window in tokens, for the status line's share of it (known for common OpenAI model names)" }),
    ),
    shortBufferTurns: Type.Integer({ minimum: 20, maximum: 80, default: 20, description: "SHORT_BUFFER_TURNS: turns the window holds" }),
    windowBlockTurns: Type.Integer({ minimum: 1, maximum: 40, default: 1, description: "turns kept verbatim when the window folds (a fold happens when keeping older turns has cost FOLD_RENT_FACTOR times a fold, or at shortBufferTurns); at most shortBufferTurns" }),
    windowAnswerTokens: Type.Integer({
      minimum: 0,
      maximum: 100000,
      default: 45,
      description: "an answer longer than 1.5× this enters the window cut to about this many tokens, its opening and close (recall_turn gives it back whole); 0 keeps answers whole",
    }),
    workingSetTokens: Type.Integer({ minimum: 0, default: 2500, description: "token cap of the working set" }),
    workingSetTtlTurns: Type.Integer({ minimum: 1, default: 3, description: "turns a working-set item stays without being used again" }),
    overflowPolicy: Type.Union(
      [Type.Literal("fifo"), Type.Literal("lru"), Type.Literal("priority"), Type.Literal("summarize")],
      { default: "priority" },
    ),
    approvals: Type.Union([Type.Literal("suggest"), Type.Literal("auto-edit"), Type.Literal("full-auto")], {
      default: "suggest",
    }),
    toolOutputTokens: Type.Integer({ minimum: 100, default: 2000, description: "cap of one tool output in the prompt" }),
    shellTimeoutMs: Type.Integer({ minimum: 100, maximum: MAX_TIMER_MS, default: 120000 }),
    sandbox: Type.Union([Type.Literal("workspace-write"), Type.Literal("read-only"), Type.Literal("off")], {
      default: "workspace-write",
      description: "run_shell sandbox (bubblewrap): workspace-write, read-only, or off (unsandboxed)",
    }),
    network: Type.Boolean({ default: false, description: "let sandboxed shell commands reach the network" }),
    shellProcessLimit: Type.Integer({
      minimum: 16,
      maximum: 4194304,
      default: DEFAULT_PROCESS_LIMIT,
      description: "processes (threads count) one sandboxed shell command may have at once, so a fork bomb cannot fill the process table",
    }),
    shellEnv: Type.Array(Type.String({ minLength: 1 }), {
      default: [],
      description: "extra environment variable names passed to shell commands (secret-like names pass only if listed)",
    }),
    prices: Type.Optional(
      Type.Object(PRICE_FIELDS, { additionalProperties: false, description: "the model's prices, for the cost estimate of /cost, the status line and --output-format json" }),
    ),
    modelPrices: Type.Optional(
      Type.Record(Type.String({ minLength: 1 }), Type.Object(PRICE_FIELDS, { additionalProperties: false }), {
        description: "prices by model name; for the model in use they take the place of `prices` (so /model switches the estimate too)",
      }),
    ),
    maxStepsPerTurn: Type.Integer({ minimum: 1, default: 24, description: "model calls per user turn" }),
    store: Type.String({
      pattern: "^(file|rediss?://\\S+)$",
      default: "file",
      description: "where the working state lives: 'file' (.valarmind/memory/state.json) or a Redis/Valkey URL (redis://host:6379/0) shared by every clone; user settings or VALARMIND_STORE only, never a project file",
    }),
    projectId: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, pattern: "^\\S(.*\\S)?$", description: "the project's name in a shared store (default: the normalized URL of git remote origin)" }),
    ),
    mcpServers: Type.Optional(McpServersSchema),
    mcp: Type.Optional(McpOptionsSchema),
  },
  { additionalProperties: false },
);

export type Settings = Static<typeof SettingsSchema>;
export type PartialSettings = Partial<Settings>;
