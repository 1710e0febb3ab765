/**
 * The session's model summarizer, wired to its memory: a fold request rides the last turn
 * request's cache (FoldPlanner), its usage is counted, what the folded turns settled is promoted
 * to state.json, and what it has to tell (a fallback, a cut summary, promotions) waits in
 * `notices` for the session's next flush.
 */
import type { Settings } from "../config/settings-schema.ts";
import type { ShortTermMemory } from "../memory/short-term.ts";
import { applyPromotions } from "../memory/promotion.ts";
import type { ModelClient, Usage } from "../model/types.ts";
import type { StateStore } from "../state/store.ts";
import type { FoldPlanner } from "./fold-planner.ts";
import { ModelSummarizer } from "./model-summarizer.ts";

export interface SessionSummarizerWiring {
  model: ModelClient;
  settings: Settings;
  sessionId: string;
  /** Where fold requests' manifests go. */
  sessionDir: string;
  memory: ShortTermMemory;
  folds: FoldPlanner;
  state: StateStore;
  onUsage: (usage: Usage) => void;
  notices: string[];
}

export function sessionSummarizer(w: SessionSummarizerWiring): ModelSummarizer {
  return new ModelSummarizer({
    model: w.model,
    settings: w.settings,
    sessionId: w.sessionId,
    sessionDir: w.sessionDir,
    currentTurn: () => w.memory.lastTurn + 1,
    currentSummary: () => w.memory.summary,
    prefix: w.folds.prefix,
    foldContext: async () => w.folds.context(w.memory),
    onUsage: w.onUsage,
    readState: async () => (await w.state.read()).state,
    promote: async (promotions) => void w.notices.push(...(await applyPromotions(w.state, promotions))),
    onFallback: (message) => w.notices.push(message),
    onNotice: (message) => w.notices.push(message),
  });
}
