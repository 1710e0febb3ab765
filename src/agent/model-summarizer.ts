/**
 * The model-backed Summarizer for the rolling summary: its own request, built by the prompt
 * builder with only the regions it needs (summary and promotion rules, the previous summary, the
 * working state, the evicted turns), streamed through the same ModelClient. The reply's
 * `<promote>` lines are handed to `promote` (see promotion.ts). If the model call fails, the fold
 * still happens with the offline extractive summarizer and the failure is reported, so the window
 * never stalls.
 */
import type { Settings } from "../config/settings-schema.ts";
import { ExtractiveSummarizer, type RollingSummary, type Summarizer } from "../memory/summary.ts";
import type { Turn } from "../memory/turn.ts";
import type { ModelClient } from "../model/types.ts";
import { buildRequest } from "../prompt/builder.ts";
import { writeManifest, recordUsage } from "../prompt/manifest.ts";
import type { WorkingState } from "../state/schema.ts";
import { parsePromotions, promotionSummaryRegions, type Promotion } from "./promotion.ts";

export interface ModelSummarizerOptions {
  model: ModelClient;
  settings: Settings;
  sessionId: string;
  /** Where the summary request's manifest goes (the session directory). */
  sessionDir: string;
  currentTurn: () => number;
  /** The rolling summary being extended (its own turn range labels the summary request). */
  currentSummary: () => RollingSummary | undefined;
  readState: () => Promise<WorkingState | undefined>;
  /** Applies what the folded turns settled to the working state. */
  promote: (promotions: Promotion[]) => Promise<void>;
  /** Told when the model call failed and the extractive fallback was used. */
  onFallback: (message: string) => void;
}

export class ModelSummarizer implements Summarizer {
  private readonly fallback = new ExtractiveSummarizer();
  private usedFallback = false;

  /** Read after each fold for its record: "model", or the fallback's name when the model call failed. */
  get name(): string {
    return this.usedFallback ? this.fallback.name : "model";
  }

  constructor(private readonly options: ModelSummarizerOptions) {}

  async summarize(previousSummary: string, evictedTurns: readonly Turn[], signal?: AbortSignal): Promise<string> {
    const { model, settings, sessionId, sessionDir } = this.options;
    const first = evictedTurns[0];
    const last = evictedTurns.at(-1);
    const known = this.options.currentSummary();
    const previous =
      previousSummary === "" || !first
        ? undefined
        : { text: previousSummary, fromTurn: known?.fromTurn ?? first.turn, throughTurn: known?.throughTurn ?? first.turn - 1 };
    const state = await this.options.readState();
    const built = await buildRequest({
      settings,
      sessionId,
      turn: this.options.currentTurn(),
      purpose: "summary",
      regions: promotionSummaryRegions(),
      sources: state ? { state } : {},
      memory: { summary: previous, turns: [], workingSet: [], overflowPolicy: "fifo", touchedFiles: [], touchedSymbols: [], events: [] },
      evictedTurns,
    });
    const manifestPath = await writeManifest(sessionDir, built.manifest);
    let text = "";
    let failure: string | undefined;
    for await (const event of model.stream(built.request, signal)) {
      if (event.type === "text_delta") text += event.delta;
      else if (event.type === "completed") {
        text = event.text || text;
        if (event.usage) await recordUsage(manifestPath, event.usage);
      } else if (event.type === "error") failure = event.message;
    }
    const { summary, promotions } = parsePromotions(text);
    this.usedFallback = failure !== undefined || summary === "";
    if (!this.usedFallback) {
      if (promotions.length > 0) await this.options.promote(promotions);
      return summary;
    }
    this.options.onFallback(`the summary request failed (${failure ?? "empty answer"}); folded turns ${first?.turn}–${last?.turn} with the offline summarizer instead`);
    return this.fallback.summarize(previousSummary, evictedTurns, signal);
  }
}
