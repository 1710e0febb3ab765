/**
 * The side request besides the main turn, built by the same builder with only the regions it
 * needs: a summary request (summary rules, the previous summary, the evicted turns) for a
 * model-backed `Summarizer`.
 *
 *   const built = await buildSummaryRequest({ settings, sessionId, turn, previous, evictedTurns });
 *   // stream built.request; the reply text is the new summary.
 */
import type { RollingSummary } from "../memory/summary.ts";
import type { Turn } from "../memory/turn.ts";
import { buildRequest, type BuildSettings, type BuiltRequest } from "./builder.ts";
import { summaryRequestRegions } from "./standard-regions.ts";

export interface SummaryRequestInput {
  settings: BuildSettings;
  sessionId: string;
  /** The turn during which the fold happens (names the manifest). */
  turn: number;
  previous: RollingSummary | undefined;
  evictedTurns: readonly Turn[];
  clock?: () => Date;
}

export function buildSummaryRequest(input: SummaryRequestInput): Promise<BuiltRequest> {
  return buildRequest({
    settings: input.settings,
    sessionId: input.sessionId,
    turn: input.turn,
    purpose: "summary",
    regions: summaryRequestRegions(),
    memory: { summary: input.previous, turns: [], workingSet: [], overflowPolicy: "fifo", touchedFiles: [], touchedSymbols: [], events: [] },
    evictedTurns: input.evictedTurns,
    ...(input.clock && { clock: input.clock }),
  });
}
