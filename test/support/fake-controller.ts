/**
 * A test double of `ChatController` that replays scripted AgentEvents, for the REPL's component
 * tests only (app-level tests use the real controller with the fake Responses server).
 *
 * Scripts are plain data. Two steps are not events: `{ type: "pause" }` holds the stream until
 * `resume()` is called or the turn is aborted, and an `approval_request` step (its `id` optional)
 * waits for the UI's `answer(id, decision)`, recorded in `decisions`. Aborting ends the turn the
 * way the core does: `turn_end` with stopReason "aborted" and the text streamed so far.
 */
import type { ChatController, CommandOutput, SessionListing, SlashCommandInfo, StatusSnapshot } from "../../src/agent/front-end-contract.ts";
import { SLASH_CATALOG } from "../../src/agent/slash-catalog.ts";
import type { AgentEvent, ApprovalDecision } from "../../src/agent/events.ts";

type ApprovalStep = Omit<Extract<AgentEvent, { type: "approval_request" }>, "id"> & { id?: string };
export type ScriptStep = Exclude<AgentEvent, { type: "approval_request" }> | ApprovalStep | { type: "pause" };

export interface FakeControllerOptions {
  status?: Partial<StatusSnapshot>;
  /** One script per submitted turn, in order; a turn without a script answers "ok". */
  turns?: ScriptStep[][];
  /** The slash-command catalogue the UI is given; the real one by default. */
  commands?: readonly SlashCommandInfo[];
  commandOutputs?: Record<string, CommandOutput | Error>;
  paths?: string[];
  history?: string[];
  sessions?: SessionListing[];
}

export const defaultStatus: StatusSnapshot = {
  sessionId: "s-test",
  model: "gpt-test",
  approvals: "suggest",
  promptTokens: 1200,
  budgetTokens: 32000,
  cachedShare: undefined,
  sessionTokens: 0,
  goal: "",
  now: "",
  warnings: [],
};

/** Text deltas of `text` cut into pieces of `size` characters. */
export function deltas(text: string, size = 4): ScriptStep[] {
  const steps: ScriptStep[] = [];
  for (let i = 0; i < text.length; i += size) steps.push({ type: "text_delta", delta: text.slice(i, i + size) });
  return steps;
}

/** A whole turn answering `text`: turn_start, deltas, turn_end. */
export function answerTurn(turn: number, text: string, size = 4): ScriptStep[] {
  return [
    { type: "turn_start", turn, userText: "" },
    ...deltas(text, size),
    { type: "turn_end", turn, text, stopReason: "completed" },
  ];
}

export class FakeController implements ChatController {
  statusValue: StatusSnapshot;
  readonly submitted: string[] = [];
  readonly commandsRun: Array<{ name: string; args: string }> = [];
  readonly decisions: ApprovalDecision[] = [];
  readonly historyAppended: string[] = [];
  readonly pathQueries: string[] = [];
  readonly signals: AbortSignal[] = [];
  closed = false;
  private readonly scripts: ScriptStep[][];
  private resumeWaiter: (() => void) | undefined;
  private waitingApproval: { id: string; answer: (decision: ApprovalDecision) => void } | undefined;
  private pausedFlag = false;

  constructor(private readonly options: FakeControllerOptions = {}) {
    this.statusValue = { ...defaultStatus, ...options.status };
    this.scripts = [...(options.turns ?? [])];
  }

  /** Whether a turn is held at a `pause` step. */
  get paused(): boolean {
    return this.pausedFlag;
  }

  resume(): void {
    this.resumeWaiter?.();
  }

  answer(id: string, decision: ApprovalDecision): boolean {
    const waiting = this.waitingApproval;
    if (waiting?.id !== id) return false;
    this.waitingApproval = undefined;
    waiting.answer(decision);
    return true;
  }

  status(): StatusSnapshot {
    return this.statusValue;
  }

  submit(text: string, signal: AbortSignal): AsyncIterable<AgentEvent> {
    this.submitted.push(text);
    this.signals.push(signal);
    const turn = this.submitted.length;
    const script = this.scripts.shift() ?? answerTurn(turn, "ok");
    return this.replay(script, turn, signal);
  }

  private async *replay(script: ScriptStep[], turn: number, signal: AbortSignal): AsyncGenerator<AgentEvent> {
    let streamed = "";
    const aborted = (): AgentEvent => ({ type: "turn_end", turn, text: streamed, stopReason: "aborted" });
    for (const step of script) {
      if (signal.aborted) return yield aborted();
      if (step.type === "pause") {
        await this.waitFor((resolve) => {
          this.resumeWaiter = resolve;
        }, signal);
        this.resumeWaiter = undefined;
        continue;
      }
      if (step.type === "approval_request") {
        const id = step.id ?? `${turn}/${step.callId}`;
        const decided = new Promise<void>((resolve) => {
          this.waitingApproval = { id, answer: (decision) => {
            this.decisions.push(decision);
            resolve();
          } };
        });
        yield { ...step, id };
        await this.waitFor((resolve) => void decided.then(resolve), signal);
        continue;
      }
      if (step.type === "text_delta") streamed += step.delta;
      yield step;
    }
  }

  /** Resolves when `arm`'s callback fires or the signal aborts. */
  private waitFor(arm: (resolve: () => void) => void, signal: AbortSignal): Promise<void> {
    this.pausedFlag = true;
    return new Promise<void>((resolve) => {
      const done = () => {
        this.pausedFlag = false;
        signal.removeEventListener("abort", done);
        resolve();
      };
      signal.addEventListener("abort", done);
      arm(done);
    });
  }

  async runCommand(name: string, args: string): Promise<CommandOutput> {
    this.commandsRun.push({ name, args });
    const output = this.options.commandOutputs?.[name];
    if (output instanceof Error) throw output;
    return output ?? { title: `/${name}`, lines: [`ran ${name}${args ? ` ${args}` : ""}`] };
  }

  commands(): readonly SlashCommandInfo[] {
    return this.options.commands ?? SLASH_CATALOG;
  }

  async completePath(prefix: string): Promise<string[]> {
    this.pathQueries.push(prefix);
    return (this.options.paths ?? []).filter((path) => path.startsWith(prefix));
  }

  async listSessions(): Promise<SessionListing[]> {
    return this.options.sessions ?? [];
  }

  async loadHistory(): Promise<string[]> {
    return [...(this.options.history ?? [])];
  }

  async appendHistory(text: string): Promise<void> {
    this.historyAppended.push(text);
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}
