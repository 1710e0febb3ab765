/**
 * Turn numbers in file order. Before writers of one session were serialized (ADR 0072), two
 * processes could both append "turn 2", and their records interleave. The window only grows
 * forward, so such a transcript could never be resumed. `orderTurns` renumbers a repeated turn
 * after the highest seen so far and gives the records of that turn number to its user records
 * in order of occurrence (the n-th `assistant` of step s to the n-th writer), each turn's records
 * then grouped after its user record: best effort, since the lines do not say which process
 * wrote them, but every message stays and the session opens.
 * The file is not changed; the same file always renumbers the same way.
 */
import type { TranscriptRecord } from "./transcript-schema.ts";

export interface Renumbering {
  /** The turn number on disk. */
  from: number;
  /** The number this read gives it. */
  to: number;
}

export interface OrderedTurns {
  records: TranscriptRecord[];
  renumbered: Renumbering[];
}

/** Which sub-turn (the n-th user record of that number) a record of a repeated turn belongs to. */
class RepeatedTurn {
  readonly numbers: number[] = [];
  private readonly seen = new Map<string, number>();
  private readonly stepOwner = new Map<number, number>();

  assign(record: TranscriptRecord & { turn: number }): number {
    const last = this.numbers.length - 1;
    let index: number;
    if (record.kind === "tool_call" || record.kind === "reasoning") {
      // A tool call (and its step's reasoning) follows its step's assistant record from the same process, when there is one.
      index = this.stepOwner.get(record.step) ?? this.next(`${record.kind}:${record.step}`);
    } else {
      const key = record.kind === "assistant" ? `assistant:${record.step}` : record.kind === "note" ? `note:${record.what}` : record.kind;
      index = this.next(key);
      if (record.kind === "assistant") this.stepOwner.set(record.step, Math.min(index, last));
    }
    return this.numbers[Math.min(index, last)] ?? record.turn;
  }

  private next(key: string): number {
    const n = this.seen.get(key) ?? 0;
    this.seen.set(key, n + 1);
    return n;
  }
}

function hasTurn(record: TranscriptRecord): record is Extract<TranscriptRecord, { turn: number }> {
  return "turn" in record && typeof record.turn === "number";
}

export function orderTurns(records: TranscriptRecord[]): OrderedTurns {
  let highest = 0;
  let repeated = false;
  for (const record of records) {
    if (record.kind !== "user") continue;
    if (record.turn <= highest) repeated = true;
    highest = Math.max(highest, record.turn);
  }
  if (!repeated) return { records, renumbered: [] };

  highest = 0;
  const turns = new Map<number, RepeatedTurn>();
  const renumbered: Renumbering[] = [];
  const latest = (turn: number): number => turns.get(turn)?.numbers.at(-1) ?? turn;
  const renumberedRecords = records.map((record): TranscriptRecord => {
    if (record.kind === "user") {
      const to = record.turn > highest ? record.turn : highest + 1;
      highest = to;
      const entry = turns.get(record.turn) ?? new RepeatedTurn();
      turns.set(record.turn, entry);
      entry.numbers.push(to);
      if (to === record.turn) return record;
      renumbered.push({ from: record.turn, to });
      return { ...record, turn: to };
    }
    if (record.kind === "summary") {
      return { ...record, from_turn: latest(record.from_turn), through_turn: latest(record.through_turn) };
    }
    if (record.kind === "working_set" || record.kind === "state_snapshot") return { ...record, turn: latest(record.turn) };
    if (!hasTurn(record)) return record;
    const entry = turns.get(record.turn);
    if (!entry) return record;
    const to = entry.assign(record);
    return to === record.turn ? record : { ...record, turn: to };
  });
  return { records: groupByTurn(renumberedRecords), renumbered };
}

/**
 * Each turn's records right after its user record (the reader closes a turn at the next user
 * record); records without a turn, and those of a turn whose user record came later, stay put.
 */
function groupByTurn(records: readonly TranscriptRecord[]): TranscriptRecord[] {
  const buckets = new Map<number, TranscriptRecord[]>();
  const slots: TranscriptRecord[][] = [];
  for (const record of records) {
    if (record.kind === "user") {
      const bucket = [record];
      buckets.set(record.turn, bucket);
      slots.push(bucket);
      continue;
    }
    const bucket = hasTurn(record) && record.kind !== "working_set" && record.kind !== "state_snapshot" ? buckets.get(record.turn) : undefined;
    if (bucket) bucket.push(record);
    else slots.push([record]);
  }
  return slots.flat();
}

/** One line for a notice: "turn 2 → 3, turn 2 → 4". */
export function describeRenumbering(renumbered: readonly Renumbering[]): string {
  return renumbered.map((r) => `turn ${r.from} → ${r.to}`).join(", ");
}
