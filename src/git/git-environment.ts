/**
 * The environment valarmind's git calls run with: an allowlist, not the user's whole environment.
 * Anything git (or a program git might still start) can read is something a repository could
 * exfiltrate, so API keys and tokens stay out, and so do the caller's GIT_* variables (GIT_DIR,
 * GIT_SSH_COMMAND, GIT_CONFIG_* would redirect or re-arm what the overrides disarm).
 */
import { FIXED_ENVIRONMENT } from "./git-overrides.ts";

/** Variables git needs to find itself, the user's own config (HOME), and to speak their locale. */
const ALLOWED = new Set(["PATH", "HOME", "LANG", "TZ", "TMPDIR", "USER", "LOGNAME", "TERM"]);

function allowed(name: string): boolean {
  return ALLOWED.has(name) || /^LC_[A-Z_]+$/.test(name);
}

/** The allowlisted part of `source` plus valarmind's fixed git variables (which win). */
export function gitEnvironment(source: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(source)) {
    if (value !== undefined && allowed(name)) env[name] = value;
  }
  return { ...env, ...FIXED_ENVIRONMENT };
}
