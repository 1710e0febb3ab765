/**
 * In-process agent tests: a temp git workspace, an AgentSession pointed at the fake Responses
 * server over real HTTP, and helpers to run a turn and read what reached the disk.
 *
 *   const root = await makeGitWorkspace({ "src/a.ts": "export const a = 1;\n" });
 *   const agent = await openAgent(root, server);                  // headless, suggest, new session
 *   const turn = await runTurn(agent.session, "read src/a.ts");
 *   turn.stopReason; turn.events; records(agent.session); await manifests(agent.session);
 *
 * Retry waits go through `agent.sleeps` (recorded, not slept) so 429/5xx tests never wait.
 */
import { mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { Value } from "@sinclair/typebox/value";
import type { AgentEvent, AnswerApproval } from "../../../src/agent/events.ts";
import { AgentSession, type AgentSessionOptions } from "../../../src/agent/session.ts";
import { SettingsSchema, type Settings } from "../../../src/config/settings-schema.ts";
import { createOpenAIClient } from "../../../src/model/openai-client.ts";
import type { ModelClient } from "../../../src/model/types.ts";
import { readManifests } from "../../../src/prompt/manifest.ts";
import type { Manifest } from "../../../src/prompt/manifest-schema.ts";
import { readSession } from "../../../src/session/transcript.ts";
import type { TranscriptRecord } from "../../../src/session/transcript-schema.ts";
import { makeTempDir } from "../../support/cli.ts";
import { gatedAfter, type FakeResponsesServer, type Gate, type StreamResponse } from "../../support/fake-responses-server.ts";
import { splitSseFrames } from "../../support/sse-script.ts";

/** The defaults of the settings schema (no user config, no environment) with overrides. */
export function testSettings(overrides: Partial<Settings> = {}): Settings {
  return { ...(Value.Default(SettingsSchema, {}) as Settings), ...overrides };
}

/** A fresh directory with `files`, initialised as a git repository (the agent reads git status). */
export async function makeGitWorkspace(files: Record<string, string> = {}): Promise<string> {
  const root = realpathSync(await makeTempDir("valarmind-agent-"));
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, rel)), { recursive: true });
    writeFileSync(join(root, rel), content);
  }
  const git = Bun.spawnSync(["git", "init", "-q", "."], { cwd: root });
  if (git.exitCode !== 0) throw new Error(`git init failed in ${root}: ${git.stderr.toString()}`);
  return root;
}

export interface AgentHandle {
  session: AgentSession;
  model: ModelClient;
  /** Retry waits the client asked for, in ms (never slept). */
  sleeps: number[];
}

export interface OpenAgentOptions extends Partial<Omit<AgentSessionOptions, "root" | "settings" | "model">> {
  settings?: Partial<Settings>;
  /** Defaults to a client with key "sk-test" on the server's base URL. */
  model?: ModelClient;
}

export function fakeModel(server: FakeResponsesServer, sleeps: number[] = []): ModelClient {
  return createOpenAIClient({ apiKey: "sk-test", baseURL: server.baseURL, sleep: async (ms) => void sleeps.push(ms) });
}

export async function openAgent(root: string, server: FakeResponsesServer, options: OpenAgentOptions = {}): Promise<AgentHandle> {
  const sleeps: number[] = [];
  const model = options.model ?? fakeModel(server, sleeps);
  const session = await AgentSession.open({
    root,
    settings: testSettings(options.settings),
    model,
    interactive: options.interactive ?? false,
    resume: options.resume ?? { kind: "new" },
    ...(options.summarizer ? { summarizer: options.summarizer } : {}),
  });
  return { session, model, sleeps };
}

export interface TurnResult {
  events: AgentEvent[];
  types: string[];
  /** The final answer (turn_end's text). */
  text: string;
  stopReason: string;
}

/**
 * Runs one turn to its end, then its settle step, as every front end does. `onEvent` sees every
 * event as it arrives (answer approvals with `answer(id, decision)`, abort). `events` holds the
 * turn's events, then the settle step's (a window fold). Fails if the turn's stream does not end
 * with `turn_end`.
 */
export async function runTurn(
  session: AgentSession,
  text: string,
  options: { signal?: AbortSignal; onEvent?: (event: AgentEvent, answer: AnswerApproval) => void | Promise<void> } = {},
): Promise<TurnResult> {
  const events: AgentEvent[] = [];
  const signal = options.signal ?? new AbortController().signal;
  const turn = session.submit(text, signal);
  const answer: AnswerApproval = (id, decision) => turn.answer(id, decision);
  for await (const event of turn) {
    events.push(event);
    await options.onEvent?.(event, answer);
  }
  const end = events.at(-1);
  if (end?.type !== "turn_end") throw new Error(`the turn's stream did not end with turn_end; events: ${events.map((e) => e.type).join(", ")}`);
  for await (const event of session.settle(signal)) {
    events.push(event);
    await options.onEvent?.(event, answer);
  }
  return { events, types: events.map((e) => e.type), text: end.text, stopReason: end.stopReason };
}

/** The session's transcript records (header excluded), as on disk now. */
export function records(session: AgentSession): TranscriptRecord[] {
  const file = session.transcriptPath;
  if (!file) throw new Error("the session has no transcript yet");
  return readSession(file).records;
}

export function recordsOf<K extends TranscriptRecord["kind"]>(session: AgentSession, kind: K): Array<Extract<TranscriptRecord, { kind: K }>> {
  return records(session).filter((r): r is Extract<TranscriptRecord, { kind: K }> => r.kind === kind);
}

/** Every manifest written for the session, in file-name order (turn, step). */
export async function manifests(session: AgentSession): Promise<Manifest[]> {
  const list = await readManifests(join(session.paths.sessionsDir, session.sessionId));
  return list.map((m) => m.manifest);
}

export function errorEvents(events: readonly AgentEvent[]): Array<Extract<AgentEvent, { type: "error" }>> {
  return events.filter((e): e is Extract<AgentEvent, { type: "error" }> => e.type === "error");
}

/** Event types with each run of `text_delta` collapsed into one, for order assertions. */
export function eventShape(types: readonly string[]): string[] {
  return types.filter((type, i) => type !== "text_delta" || types[i - 1] !== "text_delta");
}

/** The stream, paused (until `gate.release()` or the client leaves) just before its first `eventType` event. */
export function gatedBefore(response: StreamResponse, eventType: string): { response: StreamResponse; gate: Gate } {
  const index = splitSseFrames(response.body).findIndex((frame) => frame.startsWith(`event: ${eventType}\n`));
  if (index < 0) throw new Error(`${response.label} has no '${eventType}' event`);
  return gatedAfter(response, index);
}
