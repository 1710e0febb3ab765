/**
 * Spawns the real CLI (`bun src/cli/main.ts ...`) for tests.
 *
 *   const dir = await makeTempDir();                            // removed by cleanupTempDirs()
 *   const r = await runCli(["state", "goal", "ship it"], { cwd: dir });
 *   expect(r.code).toBe(0); r.stdout; r.stderr;
 *   const child = spawnCli(["state", "now", "x"], { cwd: dir, env: { SOME_HOOK: "1" } });  // raw Bun.Subprocess
 *   await readUntil(child.stderr, (text) => text.includes("ready"));
 *
 * The child gets the parent's environment plus NO_COLOR=1 and an empty XDG_CONFIG_HOME (so no user
 * settings leak in), then `env` on top (a value of `undefined` removes a variable). `stdin` is
 * written and closed; without it the child's stdin is empty.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

export const CLI_ENTRY = resolve(import.meta.dir, "../../src/cli/main.ts");

export interface CliOptions {
  cwd: string;
  env?: Record<string, string | undefined>;
  stdin?: string;
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

const tempDirs: string[] = [];
let isolatedConfig: string | undefined;

export async function makeTempDir(prefix = "valarmind-test-"): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}

/** Removes every directory made by makeTempDir (call in afterAll/afterEach). */
export async function cleanupTempDirs(): Promise<void> {
  const dirs = tempDirs.splice(0);
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
}

function childEnv(extra: Record<string, string | undefined> = {}): Record<string, string> {
  isolatedConfig ??= join(tmpdir(), `valarmind-test-config-${process.pid}`);
  const merged: Record<string, string | undefined> = { ...process.env, NO_COLOR: "1", XDG_CONFIG_HOME: isolatedConfig, ...extra };
  return Object.fromEntries(Object.entries(merged).filter((e): e is [string, string] => e[1] !== undefined));
}

/**
 * As bin/valarmind starts Bun: no `.env` and no `bunfig.toml` from the workspace (docs/security.md),
 * and React's production build (NODE_ENV defined in the code, not set in the environment).
 */
export const BUN_FLAGS = ["--no-env-file", `--config=${resolve(import.meta.dir, "../../bunfig.toml")}`, "--define", 'process.env.NODE_ENV:"production"'] as const;

export function spawnCli(args: readonly string[], options: CliOptions) {
  return Bun.spawn([process.execPath, ...BUN_FLAGS, CLI_ENTRY, ...args], {
    cwd: options.cwd,
    env: childEnv(options.env),
    stdin: options.stdin === undefined ? "ignore" : new TextEncoder().encode(options.stdin),
    stdout: "pipe",
    stderr: "pipe",
  });
}

export async function runCli(args: readonly string[], options: CliOptions): Promise<CliResult> {
  const child = spawnCli(args, options);
  const [stdout, stderr, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ]);
  return { code, stdout, stderr };
}

/** Reads `stream` until `done(textSoFar)` holds; returns the text read. Throws if the stream ends first. */
export async function readUntil(stream: ReadableStream<Uint8Array>, done: (text: string) => boolean): Promise<string> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let text = "";
  try {
    for (;;) {
      const { value, done: ended } = await reader.read();
      if (value) text += decoder.decode(value, { stream: true });
      if (done(text)) return text;
      if (ended) throw new Error(`stream ended before the expected output; got:\n${text}`);
    }
  } finally {
    reader.releaseLock();
  }
}
