/**
 * A turn's per-turn part (state changes, volatile context; ADR 0074) from its first request on:
 * the first build renders it, `take` keeps it (and returns its `turn_context` record), every
 * later step sends it as-is, and the turn enters the window with it.
 */
import type { ShortTermMemory } from "../memory/short-term.ts";
import type { Turn, TurnContext } from "../memory/turn.ts";
import type { BuiltRequest } from "../prompt/builder.ts";
import type { CurrentTask } from "../prompt/section.ts";
import type { NewRecord } from "../session/transcript-schema.ts";

export class TurnContextTaker {
  private context: TurnContext | undefined;

  constructor(
    private readonly turn: number,
    private readonly memory: ShortTermMemory,
  ) {}

  /** The step's task, carrying the part once it was taken. */
  task(task: CurrentTask): CurrentTask {
    return this.context ? { ...task, context: this.context } : task;
  }

  /** Keeps the part the first request sent; its record when it has anything (later requests: nothing). */
  take(sent: BuiltRequest["turnContext"]): NewRecord[] {
    if (this.context || !sent) return [];
    const { state, ...context } = sent;
    this.context = context;
    this.memory.noteTurnContext(this.turn, state);
    if (context.stateChanges === "" && context.context === "") return [];
    return [{ kind: "turn_context", turn: this.turn, state_changes: context.stateChanges, context: context.context, shown: context.shown, ...(state && { state: state as unknown as Record<string, unknown> }) }];
  }

  /** The finished turn as the window keeps it. */
  withContext(turn: Turn): Turn {
    return this.context ? { ...turn, context: this.context } : turn;
  }
}
