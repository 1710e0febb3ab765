/**
 * The region sets valarmind uses. The main turn is append-only between folds (issue 12,
 * docs/adr/0074-cache-aware-memory.md): core rules, the instruction files (the user's AGENTS.md,
 * the repository's AGENTS.md / CLAUDE.md files, VALARMIND.md, VALARMIND.local.md), the rolling
 * summary, the state snapshot and the working set (all three change only at a fold), the window's
 * turns (each fixed when it entered), then the user's message; after it what changes per turn —
 * state changes, volatile context (time, git, touched files), taken once per turn — and last the
 * turn's steps. Request n+1 thus repeats request n up to and including n's message.
 *
 * A fold request (`foldRequestRegions`) is the main request without the turn: the same tools,
 * instructions, summary, state, working set and window, and a closing `fold_request` message asking for the
 * summary of the oldest turns — so it is nearly all cached. The separate summary request
 * (`summaryRequestRegions`: summary rules, the previous summary and the evicted turns as a
 * transcript) remains for what does not fit that way.
 */
import type { Turn } from "../memory/turn.ts";
import { promptText } from "./prompt-text.ts";
import { Regions } from "./regions.ts";
import { tagged, taggedOwnText, type Section } from "./section.ts";
import { conversationSection, summarySection } from "./sections/conversation.ts";
import { currentStepsSection, currentTaskSection } from "./sections/current-task.ts";
import { agentsInstructionsSection, coreRulesSection, personalPreferencesSection, projectInstructionsSection, userInstructionsSection } from "./sections/instructions.ts";
import { volatileContextSection } from "./sections/volatile-context.ts";
import { workingSetSection } from "./sections/working-set.ts";
import { stateChangesSection, workingStateSection } from "./sections/working-state.ts";
import { toolTarget } from "../memory/summary.ts";

export const MAIN_TURN_ORDER = ["core", "user", "agents", "project", "personal", "summary", "state", "working_set", "conversation", "task", "state_changes", "context", "steps"] as const;

export function mainTurnRegions(): Regions {
  return Regions.empty()
    .withRegion("core", coreRulesSection)
    .withRegion("user", userInstructionsSection)
    .withRegion("agents", agentsInstructionsSection)
    .withRegion("project", projectInstructionsSection)
    .withRegion("personal", personalPreferencesSection)
    .withRegion("summary", summarySection)
    .withRegion("state", workingStateSection)
    .withRegion("working_set", workingSetSection)
    .withRegion("conversation", conversationSection)
    .withRegion("task", currentTaskSection)
    .withRegion("state_changes", stateChangesSection)
    .withRegion("context", volatileContextSection)
    .withRegion("steps", currentStepsSection);
}

/** The fold request's closing message: which turns to fold, the summary and promotion rules. */
const foldRequestSection: Section = {
  id: "fold_request",
  region: "fold",
  stable: false,
  required: true,
  placement: "message",
  role: "user",
  type: "fold_request",
  format: "text",
  reason: "fold_request",
  render: (ctx) => {
    const fold = ctx.fold;
    if (!fold) return "";
    const attrs = `turns="${fold.first}–${fold.last}" count="${fold.count}"`;
    // The message is the fold request's only uncached part besides the window's end: the rules
    // of summary-rules.md and promotion-rules.md (which the separate summary request keeps), said
    // in half the tokens (fold-rules.md).
    const body = [
      `Fold the first ${fold.count} turn${fold.count === 1 ? "" : "s"} of the conversation above (turns ${fold.first}–${fold.last}) into the conversation summary. Do not call tools and do not continue the conversation: answer with the new summary, then the promote block.`,
      promptText("fold-rules"),
    ];
    return [
      {
        id: "fold_request",
        type: "fold_request",
        format: "text",
        reason: "fold_request",
        detail: `fold turns ${fold.first}–${fold.last} into the summary${fold.economics ? `: ${fold.economics}` : ""}`,
        placement: "message",
        role: "user",
        text: `<fold_request ${attrs}>\n${body.join("\n\n")}\n</fold_request>`,
      },
    ];
  },
};

/** Tokens of a fold request's own message (its rules and task), for the fold economics. */
export function foldMessageTokens(count: (text: string) => number): number {
  return count(promptText("fold-rules")) + 60;
}

/** A fold request: the main request's prefix (tools, instructions, summary, state, window) and the fold message. */
export function foldRequestRegions(): Regions {
  return mainTurnRegions()
    .withRegion("fold", foldRequestSection)
    .withOnlyRegions(["core", "user", "agents", "project", "personal", "summary", "state", "working_set", "conversation", "fold"]);
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
