/**
 * Driving the spawned CLI (`valarmind chat -p ...`) against the fake Responses server:
 *
 *   const r = await chat(["-p", "hello"], { cwd: root, server });   // r.code, r.stdout, r.stderr
 *   latestRecords(root)                                              // the transcript as on disk
 *   jsonEvents(r.stdout)                                             // --json lines, parsed
 *
 * The child gets OPENAI_BASE_URL = the server and none of the caller's valarmind or OpenAI
 * settings, so the developer's environment cannot change a test.
 */
import { readSession, latestSession } from "../../../src/session/transcript.ts";
import { workspacePaths } from "../../../src/config/paths.ts";
import type { TranscriptRecord } from "../../../src/session/transcript-schema.ts";
import { runCli, spawnCli, type CliResult } from "../../support/cli.ts";
import type { FakeResponsesServer } from "../../support/fake-responses-server.ts";

const CLEARED = [
  "OPENAI_API_KEY",
  "OPENAI_BASE_URL",
  "VALARMIND_WIRE_API",
  "VALARMIND_MODEL",
  "VALARMIND_REASONING_EFFORT",
  "VALARMIND_APPROVALS",
  "MAX_CONTEXT_TOKENS",
  "SHORT_BUFFER_TURNS",
];

export interface ChatRun {
  cwd: string;
  /** Without a server, OPENAI_BASE_URL is left unset (the default api.openai.com). */
  server?: FakeResponsesServer;
  env?: Record<string, string | undefined>;
  stdin?: string;
}

export function chatEnv(run: Pick<ChatRun, "server" | "env">): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = Object.fromEntries(CLEARED.map((name) => [name, undefined]));
  if (run.server) env.OPENAI_BASE_URL = run.server.baseURL;
  return { ...env, ...run.env };
}

/** `valarmind chat ARGS` to completion. */
export function chat(args: readonly string[], run: ChatRun): Promise<CliResult> {
  return runCli(["chat", ...args], { cwd: run.cwd, env: chatEnv(run), ...(run.stdin !== undefined ? { stdin: run.stdin } : {}) });
}

/** `valarmind chat ARGS` as a running process (for signals). */
export function spawnChat(args: readonly string[], run: ChatRun) {
  return spawnCli(["chat", ...args], { cwd: run.cwd, env: chatEnv(run) });
}

/** `valarmind sessions ARGS`. */
export function sessions(args: readonly string[], cwd: string): Promise<CliResult> {
  return runCli(["sessions", ...args], { cwd, env: chatEnv({}) });
}

/** Records of the workspace's latest session transcript (header excluded). */
export function latestRecords(root: string): TranscriptRecord[] {
  const ref = latestSession(workspacePaths(root));
  if (!ref) throw new Error(`no session transcript under ${root}`);
  return readSession(ref.file).records;
}

/** Each stdout line parsed as JSON; throws naming the line that is not. */
export function jsonEvents(stdout: string): Array<Record<string, unknown> & { type: string }> {
  return stdout
    .split("\n")
    .filter((line) => line !== "")
    .map((line, i) => {
      const value: unknown = JSON.parse(line);
      if (typeof value !== "object" || value === null || typeof (value as { type?: unknown }).type !== "string") {
        throw new Error(`stdout line ${i + 1} is not an event object: ${line}`);
      }
      return value as Record<string, unknown> & { type: string };
    });
}

/** A failed headless turn: exit 1, `fragment` on stderr, the message and an error turn_end in the transcript. */
export function expectFailedChat(result: CliResult, root: string, userText: string): TranscriptRecord[] {
  if (result.code !== 1) throw new Error(`expected exit 1, got ${result.code}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
  const list = latestRecords(root);
  const user = list.filter((r) => r.kind === "user").at(-1);
  if (user?.kind !== "user" || user.text !== userText) throw new Error(`the user's message is not in the transcript: ${JSON.stringify(list)}`);
  const end = list.filter((r) => r.kind === "turn_end").at(-1);
  if (end?.kind !== "turn_end" || end.stop_reason !== "error") throw new Error(`expected an error turn_end, got ${JSON.stringify(end)}`);
  return list;
}
