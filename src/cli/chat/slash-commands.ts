/**
 * The slash commands that act on the current session, run by the core on behalf of the UI (the
 * catalogue is src/agent/slash-catalog.ts; /clear, /resume and /sessions switch or list sessions in
 * chat-controller.ts). Each returns plain lines; the REPL renders them. State edits go through the
 * same StateStore and pure ops as `valarmind state`.
 */
import type { CommandOutput } from "../../agent/front-end-contract.ts";
import type { AgentSession } from "../../agent/session.ts";
import type { CoreCommandName } from "../../agent/slash-catalog.ts";
import { costLines, pricesFor } from "../../agent/session-cost.ts";
import { UsageError } from "../../errors.ts";
import { undoReport, type UndoAction } from "../../checkpoints/undo.ts";
import { readManifests } from "../../prompt/manifest.ts";
import * as ops from "../../state/ops.ts";
import type { WorkingState } from "../../state/schema.ts";
import { syncStateToon } from "../../state/state-toon-file.ts";
import { APPROVAL_MODES, type ApprovalMode } from "../../tools/approvals.ts";
import { renderStateView } from "../actions/state-view.ts";
import { formatManifestReport } from "../manifest-reports/manifest-report.ts";
import { makePaint } from "../manifest-reports/text-style.ts";
import { terminalSafeRowsDeep } from "../../ui/terminal-safe-text.ts";

const out = (title: string, lines: string[], isError = false): CommandOutput => ({ title, lines, ...(isError ? { isError } : {}) });

async function changeState(session: AgentSession, op: (s: WorkingState) => ops.OpResult): Promise<CommandOutput> {
  const result = await session.state.update(op);
  return out("state", [result.written ? result.change : `unchanged: ${result.change}`, ...result.notices]);
}

function taskCommand(args: string): (s: WorkingState) => ops.OpResult {
  const [verb = "", ...rest] = args.trim().split(/\s+/);
  const tail = rest.join(" ");
  switch (verb) {
    case "add":
      if (tail === "") throw new UsageError("usage: /task add TITLE");
      return (s) => ops.addTask(s, tail);
    case "done":
      return (s) => ops.completeTask(s, rest[0] ?? "");
    case "start":
      return (s) => ops.updateTask(s, rest[0] ?? "", { status: "in_progress" });
    case "block": {
      const [id = "", ...why] = rest;
      if (why.length === 0) throw new UsageError("usage: /task block ID REASON");
      return (s) => ops.blockTask(s, id, why.join(" "));
    }
    default:
      throw new UsageError(`unknown /task action '${verb}'`, { hint: "Use /task add TITLE, /task start ID, /task done ID or /task block ID REASON." });
  }
}

export async function compactNow(session: AgentSession, signal?: AbortSignal): Promise<CommandOutput> {
  const before = await session.previewTokens();
  const folded = await session.compactConversation(signal);
  const stateRead = await session.state.read();
  let toonLine: string;
  // Without state.json there is no .valarmind/memory/ to write into, and nothing to project.
  if (stateRead.source === "missing") {
    toonLine = "no working state yet (set one with /goal or /task add): state.toon not written";
  } else {
    const { encoded: toon } = await syncStateToon(session.paths.stateToon, stateRead.state);
    toonLine = `state.toon rewritten: ${toon.tokens} tokens${toon.omitted.length > 0 ? ` (left out: ${toon.omitted.join(", ")})` : ""}`;
  }
  const after = await session.previewTokens();
  return out("compact", [
    folded > 0 ? `folded ${folded} turn(s) of the window into the rolling summary` : "the window was empty: nothing to fold",
    toonLine,
    `next request: ${before} → ${after} tokens`,
  ]);
}

async function manifestCommand(session: AgentSession, args: string): Promise<CommandOutput> {
  const manifests = await readManifests(`${session.paths.sessionsDir}/${session.sessionId}`);
  if (manifests.length === 0) return out("manifest", ["no request yet in this session; send a message first (or run valarmind prompt --dry-run)"]);
  const n = args.trim() === "" ? manifests.length : Number(args.trim());
  const chosen = Number.isInteger(n) ? manifests[n - 1] : undefined;
  if (!chosen) return out("manifest", [`no manifest ${args.trim()}: this session has ${manifests.length} (1–${manifests.length})`], true);
  // A line break in an item's text would start a row of its own (the panel makes the rest safe).
  const text = formatManifestReport(terminalSafeRowsDeep(chosen.manifest), { paint: makePaint(false), title: `${n}/${manifests.length} ${chosen.path}` });
  return out(`manifest ${n}`, text.trimEnd().split("\n"));
}

function windowCommand(session: AgentSession): CommandOutput {
  const turns = session.memory.window.turns;
  const limit = session.settings.shortBufferTurns;
  const block = session.settings.windowBlockTurns;
  if (turns.length === 0) return out("window", [`empty (holds up to ${limit} turns, in blocks of ${block})`]);
  const lines = [
    `${turns.length}/${limit} turns, each as it entered the prompt; the oldest fold into the summary when that is cheaper than keeping them cached (the last ${block} always stay), or at ${limit}`,
  ];
  for (const t of turns) {
    const tools = t.items.filter((i) => i.kind === "tool").length;
    lines.push(`turn ${t.turn}: ${t.user.replace(/\s+/g, " ").slice(0, 70)}${tools > 0 ? ` · ${tools} tool call(s)` : ""}${t.stopReason && t.stopReason !== "completed" ? ` · ${t.stopReason}` : ""}`);
  }
  const ws = session.memory.workingSet.usage();
  lines.push(`working set: ${session.memory.workingSet.items().length} item(s), ${ws.used}/${ws.budget} tokens (${session.memory.workingSet.policy})`);
  return out("window", lines);
}

/** /undo and /redo: the files of a turn given back or written again, and what could not be (ADR 0081). */
async function undoCommand(session: AgentSession, action: UndoAction, args: string): Promise<CommandOutput> {
  if (args !== "" && args !== "--force") throw new UsageError(`usage: /${action} [--force]`);
  const outcome = await session.undo(action, { force: args === "--force" });
  const report = undoReport(outcome, session.sessionId);
  return out(report.title, [...report.lines, ...outcome.notes]);
}

/** The core commands that act on the session the controller holds. */
export type SessionCommandName = Exclude<CoreCommandName, "clear" | "resume" | "sessions" | "status">;

type SessionCommand = (session: AgentSession, args: string, signal?: AbortSignal) => Promise<CommandOutput> | CommandOutput;

/** One entry per catalogue command of the core: the compiler refuses a catalogue entry left out. */
const SESSION_COMMANDS: Record<SessionCommandName, SessionCommand> = {
  state: async (session) => {
    const read = await session.state.read();
    return out("state", [...renderStateView(read.state, { all: false, color: false, source: session.paths.stateJson }).trimEnd().split("\n"), ...read.notices]);
  },
  goal: (session, text) => {
    if (text === "") throw new UsageError("usage: /goal TEXT");
    return changeState(session, (s) => ops.setGoal(s, text));
  },
  now: (session, text) => {
    if (text === "") throw new UsageError("usage: /now TEXT");
    return changeState(session, (s) => ops.setNow(s, text));
  },
  decide: (session, text) => {
    const [title = "", why = ""] = text.split(/\s+--\s+/);
    if (title.trim() === "" || why.trim() === "") throw new UsageError("usage: /decide TITLE -- WHY");
    return changeState(session, (s) => ops.addDecision(s, title.trim(), why.trim()));
  },
  task: (session, text) => changeState(session, taskCommand(text)),
  compact: (session, _args, signal) => compactNow(session, signal),
  manifest: (session, text) => manifestCommand(session, text),
  cost: (session) => {
    const prices = pricesFor(session.settings);
    return out("cost", costLines(session.cost.figures(prices), prices, { resumed: session.resumed }));
  },
  window: (session) => windowCommand(session),
  undo: (session, text) => undoCommand(session, "undo", text),
  redo: (session, text) => undoCommand(session, "redo", text),
  summary: (session) => {
    const summary = session.memory.summary;
    if (!summary) return out("summary", ["no summary yet: the window has not overflowed (or /compact was not run)"]);
    return out(`summary of turns ${summary.fromTurn}–${summary.throughTurn}`, summary.text.split("\n"));
  },
  model: (session, text) => {
    if (text === "") return out("model", [`model: ${session.settings.model}`]);
    session.setModel(text);
    return out("model", [`model set to ${text} for this session`]);
  },
  approvals: (session, text) => {
    const gate = session.tools.approvals;
    if (text === "") return out("approvals", [`mode: ${gate.mode()}`, ...gate.sessionAllowances().map((a) => `allowed this session: ${a}`)]);
    if (!APPROVAL_MODES.includes(text as ApprovalMode)) throw new UsageError(`unknown approval mode '${text}'`, { hint: `Use one of: ${APPROVAL_MODES.join(", ")}.` });
    gate.setMode(text as ApprovalMode);
    return out("approvals", [`approvals set to ${text}`]);
  },
};

/** `signal` cancels a command that waits on the model (/compact's fold request): Ctrl+C or Esc in the REPL. */
export async function runSlashCommand(session: AgentSession, name: SessionCommandName, args: string, signal?: AbortSignal): Promise<CommandOutput> {
  return SESSION_COMMANDS[name](session, args.trim(), signal);
}
