/**
 * Secrets taken from the environment: the value of every variable whose name says it holds one
 * (KEY, SECRET, TOKEN, PASSWORD, CREDENTIAL, any case), OPENAI_API_KEY among them. Short values
 * (under 8 characters) and plain numbers are left alone: they cannot be told apart from ordinary
 * words and counts (MAX_CONTEXT_TOKENS=200000), and redacting them would garble every line.
 */
import type { NamedSecret } from "./redact-known-values.ts";

export type Env = Readonly<Record<string, string | undefined>>;

const SECRET_NAME = /KEY|SECRET|TOKEN|PASSWORD|CREDENTIAL/i;
const MIN_SECRET_LENGTH = 8;

let cached: { key: string; secrets: readonly NamedSecret[] } | undefined;

/**
 * The environment's secrets, longest first (so a secret containing another is replaced whole).
 * Cached by the variables' names and values: redaction runs on every transcript line, and a test
 * that changes the environment still gets a fresh list.
 */
export function envSecrets(env: Env): readonly NamedSecret[] {
  const found: NamedSecret[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || value.length < MIN_SECRET_LENGTH || !SECRET_NAME.test(name)) continue;
    if (/^\d+$/.test(value)) continue;
    found.push({ name, value });
  }
  const key = found.map((s) => `${s.name}\u0000${s.value}`).join("\u0001");
  if (cached?.key === key) return cached.secrets;
  found.sort((a, b) => b.value.length - a.value.length || a.name.localeCompare(b.name));
  cached = { key, secrets: found };
  return found;
}
