/**
 * The environment a shell command gets: an allowlist, not valarmind's own environment minus a
 * few names, so API keys and tokens the user exported for other tools (GITHUB_TOKEN,
 * AWS_SECRET_ACCESS_KEY, valarmind's own OPENAI_API_KEY) never reach a command the model runs.
 * Identical with and without the sandbox.
 */
const BASE_NAMES = new Set(["PATH", "HOME", "USER", "LOGNAME", "LANG", "TERM", "SHELL", "TMPDIR", "TZ"]);
const SECRET_NAME = /KEY|SECRET|TOKEN|PASSWORD|CREDENTIAL/i;

/**
 * `extra` are the names the user listed in settings.shellEnv; a secret-looking name passes only
 * when listed there by its exact name (so `LC_*` or the base names can never carry one).
 */
export function buildShellEnv(source: Record<string, string | undefined>, extra: readonly string[]): Record<string, string> {
  const listed = new Set(extra);
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(source)) {
    if (value === undefined) continue;
    const allowed = listed.has(name) || ((BASE_NAMES.has(name) || name.startsWith("LC_")) && !SECRET_NAME.test(name));
    if (allowed) env[name] = value;
  }
  return env;
}
