/**
 * The one way valarmind runs git. A repository is untrusted (docs/security.md), and git runs
 * programs its config names — the fsmonitor hook and filter drivers even on `git status`. So every
 * call here:
 * - first lists the driver names the config mentions (`git config --get-regexp`: reading config
 *   runs nothing) and neutralises them, with the fixed overrides (git-overrides.ts);
 * - runs with an allowlisted environment (git-environment.ts), stdin closed, prompts off;
 * - is bounded in time: a config can point git at a FIFO, which would block it forever.
 *
 *   const r = await runGit(root, ["status", "--porcelain=v1"], { signal });
 *   if (r.exitCode === 0) use(r.stdout);
 *
 * Throws only when git cannot be started (not on PATH); a failing git is an exit code.
 */
import { configEnvironment, type ConfigOverride, DRIVER_KEYS_PATTERN, driverOverrides, FIXED_OVERRIDES, parseConfigKeys, safeGitArgs } from "./git-overrides.ts";
import { gitEnvironment } from "./git-environment.ts";

export const GIT_TIMEOUT_MS = 10_000;

export interface GitResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

export interface RunGitOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
  /** Harmless settings for this call (`core.quotePath`); the safety overrides come after and win. */
  config?: readonly ConfigOverride[];
  /** Where the allowlisted variables come from (default: process.env). */
  env?: Readonly<Record<string, string | undefined>>;
}

async function spawnGit(root: string, args: readonly string[], env: Record<string, string>, signal: AbortSignal): Promise<GitResult> {
  const proc = Bun.spawn(["git", ...args], { cwd: root, env, stdin: "ignore", stdout: "pipe", stderr: "pipe", signal });
  const [stdout, stderr, exitCode] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { exitCode, stdout, stderr };
}

/** Runs `git ARGS` in `root` with every repository-named program disabled. */
export async function runGit(root: string, args: readonly string[], options: RunGitOptions = {}): Promise<GitResult> {
  const timeout = AbortSignal.timeout(options.timeoutMs ?? GIT_TIMEOUT_MS);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  const base = gitEnvironment(options.env ?? process.env);
  const fixed = { ...base, ...configEnvironment([...(options.config ?? []), ...FIXED_OVERRIDES]) };

  const listing = await spawnGit(root, ["config", "-z", "--get-regexp", DRIVER_KEYS_PATTERN], fixed, signal);
  // Exit 1 means "no such keys"; anything else means the config could not be read, and then the
  // drivers it may name are unknown: do not run the command.
  if (listing.exitCode !== 0 && listing.exitCode !== 1) {
    return { exitCode: listing.exitCode, stdout: "", stderr: `valarmind did not run git: reading the repository's git config failed: ${listing.stderr.trim()}` };
  }
  const overrides = [...(options.config ?? []), ...FIXED_OVERRIDES, ...driverOverrides(parseConfigKeys(listing.stdout))];
  return spawnGit(root, safeGitArgs(args), { ...base, ...configEnvironment(overrides) }, signal);
}
