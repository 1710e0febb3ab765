/**
 * Builds the ModelClient from settings and the environment, and the request fields that come from
 * settings (model, reasoning). The API key is read from the environment only, passed to the client
 * and nowhere else: never into settings, logs, sessions or recordings.
 *
 * Without OPENAI_API_KEY: against api.openai.com the client yields the `no_api_key` error on every
 * call (so the UI can show it); against any other base URL (vLLM, LM Studio, Ollama, a test server)
 * a placeholder key is sent, since such servers rarely check it, and a 401 says so.
 *
 * `settings.wireApi` picks the HTTP API: "responses" (default) or "chat" for Chat Completions
 * servers (llama.cpp, vLLM, Ollama, …); the base URL and the key are resolved the same way.
 */
import type { Settings } from "../config/settings-schema.ts";
import { noApiKeyError } from "./model-errors.ts";
import { createOpenAIClient } from "./openai-client.ts";
import type { ModelClient, ModelRequest, WireApi } from "./types.ts";

export const DEFAULT_BASE_URL = "https://api.openai.com/v1";
/** Sent as the bearer token to custom base URLs when no key is set. */
export const PLACEHOLDER_API_KEY = "valarmind-no-key";

export type Env = Record<string, string | undefined>;

export interface ResolvedEndpoint {
  baseURL: string;
  apiKey: string | undefined;
  keySource: "env" | "placeholder" | "missing";
}

function isOpenAIHost(baseURL: string): boolean {
  try {
    return new URL(baseURL).hostname === "api.openai.com";
  } catch {
    return false;
  }
}

export function resolveEndpoint(settings: Pick<Settings, "baseURL">, env: Env = process.env): ResolvedEndpoint {
  const baseURL = (settings.baseURL || env.OPENAI_BASE_URL || DEFAULT_BASE_URL).replace(/\/+$/, "");
  const key = env.OPENAI_API_KEY?.trim();
  if (key) return { baseURL, apiKey: key, keySource: "env" };
  if (!isOpenAIHost(baseURL)) return { baseURL, apiKey: PLACEHOLDER_API_KEY, keySource: "placeholder" };
  return { baseURL, apiKey: undefined, keySource: "missing" };
}

/** A problem to show before the first call (REPL status line), or undefined when the setup looks usable. */
export function endpointWarning(endpoint: ResolvedEndpoint): string | undefined {
  return endpoint.keySource === "missing" ? noApiKeyError().message : undefined;
}

export interface ModelClientSetup {
  /** `wireApi` defaults to "responses" when left out. */
  settings: Pick<Settings, "baseURL"> & { wireApi?: WireApi };
  env?: Env;
  maxRetries?: number;
  timeoutMs?: number;
}

export function createModelClient(setup: ModelClientSetup): ModelClient {
  const endpoint = resolveEndpoint(setup.settings, setup.env);
  return createOpenAIClient({
    apiKey: endpoint.apiKey,
    baseURL: endpoint.baseURL,
    keyIsPlaceholder: endpoint.keySource === "placeholder",
    wire: setup.settings.wireApi ?? "responses",
    ...(setup.maxRetries !== undefined ? { maxRetries: setup.maxRetries } : {}),
    ...(setup.timeoutMs !== undefined ? { timeoutMs: setup.timeoutMs } : {}),
  });
}

/**
 * Models that accept `reasoning` (o-series, gpt-5*, gpt-oss, codex). Others answer HTTP 400
 * "Unsupported parameter: 'reasoning.effort'", so the field is left out for them.
 */
export function isReasoningModel(model: string): boolean {
  return /^(o\d|gpt-5|gpt-oss|codex)/i.test(model.replace(/^.*\//, ""));
}

/** `reasoning` for a request: effort from settings, summaries on ("auto"); none for "none" or non-reasoning models. */
export function reasoningFor(settings: Pick<Settings, "model" | "reasoningEffort">): ModelRequest["reasoning"] {
  if (settings.reasoningEffort === "none" || !isReasoningModel(settings.model)) return undefined;
  return { effort: settings.reasoningEffort, summary: "auto" };
}
