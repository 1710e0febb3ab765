/**
 * The region sets valarmind uses. The main turn follows the cache-aware order (ARCHITECTURE.md):
 * stable first — core rules, VALARMIND.md, VALARMIND.local.md, rolling summary, the window's
 * settled blocks — then what changes — working state, working set, the turns since the last
 * block boundary, volatile context (time, git, touched files), the current task. Splitting the
 * window at its block boundary keeps a new turn from invalidating state and working set every
 * turn (docs/adr/0011-split-window-at-block-boundary.md). The summary and title requests take only
 * what they need (seed 003's `withOnlyRegions`).
 */
import type { Turn } from "../memory/turn.ts";
import { promptText } from "./prompt-text.ts";
import { Regions } from "./regions.ts";
import { tagged, taggedOwnText, type Section } from "./section.ts";
import { conversationSection, recentTurnsSection, summarySection } from "./sections/conversation.ts";
import { currentTaskSection } from "./sections/current-task.ts";
import { coreRulesSection, personalPreferencesSection, projectInstructionsSection } from "./sections/instructions.ts";
import { volatileContextSection } from "./sections/volatile-context.ts";
import { workingSetSection } from "./sections/working-set.ts";
import { stateChangesSection, workingStateSection } from "./sections/working-state.ts";
import { toolTarget } from "../memory/summary.ts";

export const MAIN_TURN_ORDER = ["core", "project", "personal", "summary", "conversation", "state", "working_set", "recent", "state_changes", "context", "task"] as const;

export function mainTurnRegions(): Regions {
  return Regions.empty()
    .withRegion("core", coreRulesSection)
    .withRegion("project", projectInstructionsSection)
    .withRegion("personal", personalPreferencesSection)
    .withRegion("summary", summarySection)
    .withRegion("conversation", conversationSection)
    .withRegion("state", workingStateSection)
    .withRegion("working_set", workingSetSection)
    .withRegion("recent", recentTurnsSection)
    .withRegion("state_changes", stateChangesSection)
    .withRegion("context", volatileContextSection)
    .withRegion("task", currentTaskSection);
}

/** Evicted turns as a plain transcript: the summarizer reads them, it does not continue them. */
export function transcriptText(turns: readonly Turn[]): string {
  return turns
    .map((turn) => {
      const lines = [`[turn ${turn.turn}] user: ${turn.user}`];
      for (const item of turn.items) {
        if (item.kind === "assistant") lines.push(`assistant: ${item.text}`);
        else {
          const target = toolTarget(item);
          lines.push(`tool ${item.name}${target ? ` ${target}` : ""}${item.isError ? " (failed)" : ""}: ${item.output}`);
        }
      }
      return lines.join("\n");
    })
    .join("\n\n");
}

const summaryRulesSection: Section = {
  id: "summary_rules",
  region: "summary_rules",
  stable: true,
  required: true,
  placement: "instructions",
  type: "instructions",
  format: "markdown",
  reason: "summary_request",
  render: () => taggedOwnText("summary_rules", promptText("summary-rules")),
};

const evictedTurnsSection: Section = {
  id: "evicted_turns",
  region: "evicted",
  stable: false,
  required: true,
  placement: "message",
  role: "user",
  type: "evicted_turns",
  format: "text",
  reason: "turns_to_fold",
  render: (ctx) => {
    const first = ctx.evictedTurns[0]?.turn;
    const last = ctx.evictedTurns.at(-1)?.turn;
    if (first === undefined) return "";
    return tagged("turns_to_fold", `${transcriptText(ctx.evictedTurns)}\n\n${promptText("summary-task")}`, { turns: `${first}–${last}`, source: "transcript: user messages, answers, tool output" });
  },
};

/** A summary request sees the summary rules, the previous summary and the evicted turns — nothing else. */
export function summaryRequestRegions(): Regions {
  return mainTurnRegions()
    .withRegion("summary_rules", summaryRulesSection)
    .withRegion("evicted", evictedTurnsSection)
    .withOnlyRegions(["summary_rules", "summary", "evicted"])
    .withRegionalOrder(["summary_rules", "summary", "evicted"]);
}

const titleRulesSection: Section = {
  id: "title_rules",
  region: "title_rules",
  stable: true,
  required: true,
  placement: "instructions",
  type: "instructions",
  format: "markdown",
  reason: "title_request",
  render: () => taggedOwnText("title_rules", promptText("title-rules")),
};

/** A title request sees the title rules and the first user message. */
export function titleRequestRegions(): Regions {
  return mainTurnRegions()
    .withRegion("title_rules", titleRulesSection)
    .withOnlyRegions(["title_rules", "task"])
    .withRegionalOrder(["title_rules", "task"]);
}
