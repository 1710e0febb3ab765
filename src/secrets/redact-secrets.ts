/**
 * The one redactor for everything valarmind writes to disk itself (transcripts, manifests, the
 * working state, state.toon, ADRs, REPL history, model recordings). What the model sees in the
 * live session is never passed through it: only the copies at rest are redacted.
 *
 *   redactSecrets("GITHUB_TOKEN=ghp_…")          // "GITHUB_TOKEN=[redacted:GITHUB_TOKEN]"
 *   redactSecretsInJson(record)                  // the same value with every string redacted
 *
 * Secrets are (1) the values of the environment's secret-named variables (env-secrets.ts), (2)
 * values of secret-named assignments in the text (secret-assignments.ts), remembered for the rest
 * of the process so they are also found bare (learned-secrets.ts), (3) private key blocks,
 * well-known key formats and bearer tokens (key-formats.ts). Each is replaced only as a whole
 * token, by a marker naming what it was, so ordinary words are never cut open. Every pass is
 * linear time.
 */
import { envSecrets, type Env } from "./env-secrets.ts";
import { redactBearerTokens, redactKeyFormats, redactPrivateKeyBlocks } from "./key-formats.ts";
import { LearnedSecrets } from "./learned-secrets.ts";
import { redactKnownValues, type NamedSecret } from "./redact-known-values.ts";
import { redactSecretAssignments } from "./secret-assignments.ts";

export type { Env } from "./env-secrets.ts";

const learned = new LearnedSecrets();

/** Test-only: forget the secrets learned from assignments so far. */
export function forgetLearnedSecrets(): void {
  learned.forget();
}

function redactWith(text: string, secrets: readonly NamedSecret[]): string {
  let out = redactKnownValues(text, secrets);
  out = redactKnownValues(out, learned.list());
  out = redactPrivateKeyBlocks(out);
  // Assignments before key formats, so `GITHUB_TOKEN=ghp_…` is named by its variable.
  const assigned = redactSecretAssignments(out);
  out = assigned.text;
  // A value first seen in this text may also stand bare earlier in it.
  if (learned.learn(assigned.found)) out = redactKnownValues(out, learned.list());
  out = redactKeyFormats(out);
  return redactBearerTokens(out);
}

export function redactSecrets(text: string, env: Env = process.env): string {
  return redactWith(text, envSecrets(env));
}

function redactValue(value: unknown, secrets: readonly NamedSecret[]): unknown {
  if (typeof value === "string") return redactWith(value, secrets);
  if (Array.isArray(value)) return value.map((item) => redactValue(item, secrets));
  if (typeof value === "object" && value !== null) {
    // fromEntries defines own properties: a key named "__proto__" stays a key (assignment would set the prototype).
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, redactValue(item, secrets)]));
  }
  return value;
}

/**
 * A copy of a JSON-shaped value with every string redacted (keys are left alone: they are the
 * format's field names). Redacting values rather than serialized text keeps the file valid JSON
 * and finds a secret however JSON would have escaped it. Strings stay strings, so the copy has
 * the input's type.
 */
export function redactSecretsInJson<T>(value: T, env: Env = process.env): T {
  return redactValue(value, envSecrets(env)) as T;
}
