/**
 * The session's subscriber to a turn's event stream: what must reach the disk is written from the
 * events, in their order — memory changes, assistant text and tool calls to the transcript, the
 * API's usage into the step's manifest. The loop never calls back into the session for these.
 */
import { describeError } from "../errors.ts";
import type { SessionTranscript } from "../session/transcript.ts";
import { recordUsage } from "../prompt/manifest.ts";
import type { Usage } from "../model/types.ts";
import type { TurnManifestSummary } from "./events.ts";
import { toolMemory, type ToolMemory } from "../memory/tool-memory.ts";
import type { AgentEvent, TurnEndEvent } from "./events.ts";
import type { TurnLoopEvent, TurnOutcome, TurnRecordEvent, TurnStream } from "./turn-loop.ts";

const RECORD_EVENTS = new Set<TurnLoopEvent["type"]>(["memory_changed", "assistant_message", "tool_result"]);

/** Events for the session alone (the transcript's records); every other event goes to front ends too. */
export function isRecordEvent(event: TurnLoopEvent): event is TurnRecordEvent {
  return RECORD_EVENTS.has(event.type);
}

export interface RecordedRequest {
  manifest: TurnManifestSummary;
  /** Set once the step's usage arrived. */
  usage?: Usage;
}

export class TurnRecorder {
  /** The tool calls' memory (prompt summaries), by call id, for the turn's entry into the window. */
  readonly summaries = new Map<string, ToolMemory>();
  private current: RecordedRequest | undefined;

  constructor(
    private readonly transcript: SessionTranscript,
    private readonly turn: number,
    private readonly count: (text: string) => number,
    /** Told each request as it is built and again when its usage arrives (the status line). */
    private readonly onRequest: (request: RecordedRequest) => void,
    /** Told when a record that is not the conversation (a manifest's usage) could not be written. */
    private readonly onProblem: (message: string) => void = () => {},
  ) {}

  async record(event: TurnLoopEvent): Promise<void> {
    const { transcript, turn } = this;
    switch (event.type) {
      case "memory_changed":
        if (event.records.length > 0) transcript.append(event.records);
        return;
      case "assistant_message":
        transcript.append({ kind: "assistant", turn, step: event.step, text: event.text, tokens: this.count(event.text) });
        return;
      case "tool_result": {
        const { call, outcome, step } = event;
        const memory = toolMemory(call, outcome);
        this.summaries.set(call.callId, memory);
        transcript.append({
          kind: "tool_call",
          turn,
          step,
          call_id: call.callId,
          name: call.name,
          arguments: call.arguments,
          output: outcome.forModel,
          summary: memory.promptSummary,
          ...(outcome.raw !== outcome.forModel ? { raw: outcome.raw } : {}),
          is_error: outcome.isError,
          tokens: {
            call: this.count(call.name + call.arguments),
            output: this.count(outcome.forModel),
            summary: this.count(memory.promptSummary),
          },
        });
        return;
      }
      case "request_built":
        this.current = { manifest: event.manifest };
        this.onRequest(this.current);
        return;
      case "usage":
        // A fold request's usage went to its own manifest; it is no step of this turn.
        if (!this.current || event.purpose === "fold") return;
        this.current.usage = event.usage;
        this.onRequest(this.current);
        // The usage is the manifest's, not the conversation's: failing to write it (a full disk)
        // must not throw away an answer that was paid for and fits in the transcript.
        await recordUsage(this.current.manifest.path, event.usage).catch((error: unknown) =>
          this.onProblem(`the usage of this request was not added to its manifest ${this.current?.manifest.path ?? ""}: ${describeError(error)}`),
        );
        return;
      default:
        return;
    }
  }

  /**
   * Follows the turn's stream to its end: records every event, passes on to `emit` the ones that
   * are not only records (the `turn_end` is returned instead, for the session to send last), then
   * writes the turn's end: the reason it failed, if it did, and its `turn_end` record. If
   * recording throws, `stop` ends the loop too: nobody would record what it does next.
   */
  async follow(run: TurnStream<TurnLoopEvent>, emit: (event: AgentEvent) => void, stop: () => void): Promise<{ outcome: TurnOutcome; end: TurnEndEvent | undefined }> {
    let end: TurnEndEvent | undefined;
    try {
      for await (const event of run) {
        await this.record(event);
        if (event.type === "turn_end") end = event;
        else if (!isRecordEvent(event)) emit(event);
      }
    } catch (error) {
      stop();
      throw error;
    }
    const outcome = await run.result();
    const { transcript, turn } = this;
    // The reason a turn failed stays with it, so `sessions show` and a later reader can tell why.
    if (outcome.error) transcript.append({ kind: "note", turn, what: `error:${outcome.error.kind}`, text: outcome.error.message });
    transcript.append({ kind: "turn_end", turn, steps: outcome.steps, stop_reason: outcome.stopReason, ...(outcome.steps > 0 ? { usage: outcome.usage } : {}) });
    return { outcome, end };
  }
}
