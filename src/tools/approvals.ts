/**
 * The approval gate. Modes: `suggest` (default: ask before any write or shell command),
 * `auto-edit` (file writes allowed, shell asks), `full-auto` (everything allowed but MCP tools,
 * which ask in every mode unless the user's settings allow their server). Reads and the
 * memory tools never ask (they touch only valarmind's own state; see docs/adr/0030) — unless the
 * call is escalated: a tool that finds a call riskier than its kind (it writes a git hook, its file
 * has other hard links) sets `escalate`, and then it asks in every mode but `full-auto`; with
 * `askEvenInFullAuto` (a shell command bubblewrap cannot contain) it asks in `full-auto` too.
 *
 * "Allow for this session" remembers exactly what the request showed (`remember`): the whole tool,
 * or for run_shell the exact command line or, when offered, its prefix (rules in shell-prefix.ts).
 * Tool-wide and prefix allowances never cover an escalated call; an exact allowance does only for
 * the warning the user saw. A confirmation left unanswered when the turn ends (the user moved on)
 * stays pending for 3 turns (seed 002's PendingConfirmation): a late "allow" then approves exactly
 * that call should the model repeat it; after that it expires. Without a terminal nothing can be
 * asked, so a call that would ask is refused with a message naming the flag that allows it.
 */
import type { ApprovalMode } from "../agent/front-end-contract.ts";
import type { ApprovalDecision, SessionRemember, SessionScope } from "../agent/events.ts";
import { prefixAllows, sessionPrefix } from "./shell-prefix.ts";
import type { ToolKind } from "./types.ts";

export type { ApprovalMode, SessionRemember };
export type ApprovalVerdict = "allow" | "ask" | "deny";

export const APPROVAL_MODES: readonly ApprovalMode[] = ["suggest", "auto-edit", "full-auto"];
/** Turns after which an unanswered confirmation expires (seed 002: timeout_turns = 3). */
export const CONFIRMATION_EXPIRY_TURNS = 3;

export interface ApprovalSubject {
  name: string;
  /** run_shell's command line (session allowances match it exactly or by prefix). */
  command?: string;
  /** Canonical JSON of the arguments: a late approval covers exactly this call. */
  argsKey: string;
  /**
   * Why this call must ask even where the mode would allow it ("writes a git hook"). Set by the
   * tool; only `full-auto` lets it through without asking.
   */
  escalate?: string;
  /** With `escalate`: full-auto asks too (a shell command with no sandbox to contain it). */
  askEvenInFullAuto?: boolean;
  /** The user's own settings allow the call (its MCP server is in `mcp.allow`); an escalated call still asks. */
  allowedBySettings?: boolean;
}

/** What the registry asks about; the gate adds the warning and what a session answer remembers. */
export interface ApprovalQuestion {
  callId: string;
  name: string;
  description: string;
  diff?: string;
  /** run_shell: the whole command, when the one-line description shows only its start. */
  command?: string;
}

/** What the agent's `ask` callback receives; it becomes an `approval_request` event. */
export interface ApprovalRequest extends ApprovalQuestion {
  /** The subject's `escalate` reason, for the dialog to show prominently. */
  warning?: string;
  /** What "allow for this session" would remember; absent: only this call can be allowed. */
  remember?: SessionRemember;
}

export type AskApproval = (request: ApprovalRequest) => Promise<ApprovalDecision>;

export interface PendingConfirmation extends ApprovalRequest {
  askedTurn: number;
  /** The first turn at which it no longer counts. */
  expiresAtTurn: number;
}

export interface ApprovalGate {
  readonly interactive: boolean;
  mode(): ApprovalMode;
  setMode(mode: ApprovalMode): void;
  /** Pure: what the gate would do with this call now. */
  decide(call: ApprovalSubject, kind: ToolKind): ApprovalVerdict;
  /** Why `decide` said "deny": the headless refusal, naming the flag that allows the call. */
  refusal(call: ApprovalSubject, kind: ToolKind): string;
  /**
   * Asks (through `ask`, adding `warning` and `remember` to the question) and records the answer;
   * an abort leaves the confirmation pending.
   */
  confirm(question: ApprovalQuestion, call: ApprovalSubject, ask: AskApproval, signal: AbortSignal): Promise<ApprovalDecision>;
  /** Call at the start of each user turn; returns the confirmations that expired now. */
  beginTurn(turn: number): PendingConfirmation[];
  pending(): PendingConfirmation[];
  /** Answers a pending confirmation after its turn ended (e.g. `/approve`); false if unknown or expired. */
  answer(callId: string, decision: ApprovalDecision): boolean;
  /** What this session remembers, one line each, as shown when it was granted (for `/approvals`). */
  sessionAllowances(): string[];
}

export interface ApprovalGateOptions {
  mode: ApprovalMode;
  /** False for headless runs: nothing can be asked. */
  interactive: boolean;
}

/**
 * What "allow for this session" may remember for a call: the tool, or for a shell command the
 * exact line and (when its rules allow) a prefix. Nothing for an escalated call of a tool (only
 * that call may be allowed), and no prefix for an escalated command.
 */
export function sessionOffer(call: ApprovalSubject): SessionRemember | undefined {
  if (call.command === undefined) return call.escalate === undefined ? { kind: "tool", tool: call.name } : undefined;
  const exact = call.command.trim();
  const prefix = call.escalate === undefined ? sessionPrefix(exact) : undefined;
  return prefix === undefined ? { kind: "command", exact } : { kind: "command", exact, prefix };
}

function needsAsking(mode: ApprovalMode, kind: ToolKind): boolean {
  if (kind === "read" || kind === "memory") return false;
  // An MCP server is a program or service valarmind neither wrote nor sandboxes: every mode asks
  // unless the user's own settings allow the server (docs/mcp.md).
  if (kind === "external") return true;
  if (kind === "write") return mode === "suggest";
  return mode !== "full-auto";
}

export function createApprovalGate(options: ApprovalGateOptions): ApprovalGate {
  let mode = options.mode;
  let turn = 0;
  const toolAllowances = new Set<string>();
  const prefixAllowances = new Set<string>();
  /** Exact command lines → the warnings they were approved with ("" for none). */
  const exactAllowances = new Map<string, Set<string>>();
  const pending = new Map<string, PendingConfirmation & { call: ApprovalSubject }>();
  /** Exact calls approved late, keyed by name + argsKey + warning, valid until their turn of expiry. */
  const lateApprovals = new Map<string, number>();

  const exactKey = (call: ApprovalSubject): string => `${call.name}\0${call.argsKey}\0${call.escalate ?? ""}`;

  /** Remembers what the request offered under `scope`; a scope it did not offer remembers nothing. */
  function allowForSession(offer: SessionRemember | undefined, scope: SessionScope, call: ApprovalSubject): void {
    if (offer === undefined) return;
    if (offer.kind === "tool") {
      if (scope === "tool") toolAllowances.add(offer.tool);
      return;
    }
    if (scope === "prefix" && offer.prefix !== undefined) prefixAllowances.add(offer.prefix);
    else if (scope === "exact") {
      const warnings = exactAllowances.get(offer.exact) ?? new Set<string>();
      warnings.add(call.escalate ?? "");
      exactAllowances.set(offer.exact, warnings);
    }
  }

  function allowedBySession(call: ApprovalSubject): boolean {
    const escalated = call.escalate !== undefined;
    if (call.command === undefined) return !escalated && toolAllowances.has(call.name);
    const warnings = exactAllowances.get(call.command.trim());
    // An exact allowance covers an escalated call only for the warning the user saw when granting it.
    if (warnings && (!escalated || warnings.has(call.escalate ?? ""))) return true;
    return !escalated && [...prefixAllowances].some((prefix) => prefixAllows(prefix, call.command ?? ""));
  }

  function record(callId: string, decision: ApprovalDecision, late: boolean): void {
    const entry = pending.get(callId);
    if (!entry) return;
    pending.delete(callId);
    if (decision.kind === "allow_session") allowForSession(entry.remember, decision.scope, entry.call);
    // Any late allow (once, or a session answer whatever its scope) approves that very call if the model repeats it.
    if (decision.kind !== "deny" && late) lateApprovals.set(exactKey(entry.call), entry.expiresAtTurn);
  }

  function describeAllowances(): string[] {
    const exact = [...exactAllowances].map(([command, warnings]) => {
      const seen = [...warnings].filter((w) => w !== "");
      return `run_shell: exactly \`${command}\`${seen.length > 0 ? ` (also when warned: ${seen.join("; ")})` : ""}`;
    });
    return [
      ...[...toolAllowances].map((tool) => `${tool}: every call (except calls with a warning)`),
      ...[...prefixAllowances].map((prefix) => `run_shell: \`${prefix}\` followed by any arguments allowed by the prefix rules`),
      ...exact,
    ];
  }

  return {
    interactive: options.interactive,
    mode: () => mode,
    setMode(next) {
      mode = next;
    },
    decide(call, kind) {
      if (call.allowedBySettings === true && call.escalate === undefined) return "allow";
      if (mode === "full-auto" && call.askEvenInFullAuto !== true && kind !== "external") return "allow";
      if (call.escalate === undefined && !needsAsking(mode, kind)) return "allow";
      if (allowedBySession(call)) return "allow";
      const late = lateApprovals.get(exactKey(call));
      if (late !== undefined && turn < late) return "allow";
      return options.interactive ? "ask" : "deny";
    },
    refusal(call, kind) {
      const tail = "but there is no terminal to ask (headless run). Nothing was done.";
      if (call.escalate !== undefined && call.askEvenInFullAuto === true) {
        return `${call.name} needs approval in every mode, full-auto included, because ${call.escalate}; ${tail}`;
      }
      if (call.escalate !== undefined) {
        return (
          `${call.name} needs approval in '${mode}' mode because ${call.escalate}, ${tail} ` +
          `To allow it, re-run with --approvals full-auto (or --yes to allow every tool call).`
        );
      }
      if (kind === "external") {
        return (
          `${call.name} is a tool of an MCP server (a program or service outside valarmind), which needs approval in every mode, ${tail} ` +
          `To let this server's tools run without asking, add its name to "mcp": { "allow": [...] } in your user config (docs/mcp.md); --yes does not cover MCP tools.`
        );
      }
      const what = kind === "shell" ? "run a shell command" : "change files";
      const flag = kind === "shell" ? "--approvals full-auto" : "--approvals auto-edit";
      return `${call.name} would ${what}, which needs approval in '${mode}' mode, ${tail} To allow it, re-run with ${flag} (or --yes to allow every tool call).`;
    },
    async confirm(question, call, ask, signal) {
      const remember = sessionOffer(call);
      const request: ApprovalRequest = {
        ...question,
        ...(call.escalate === undefined ? {} : { warning: call.escalate }),
        ...(remember === undefined ? {} : { remember }),
      };
      const entry = { ...request, call, askedTurn: turn, expiresAtTurn: turn + CONFIRMATION_EXPIRY_TURNS };
      pending.set(request.callId, entry);
      let aborted = false;
      const answered = ask(request).then((decision) => {
        record(request.callId, decision, aborted);
        return decision;
      });
      const onAbort = new Promise<ApprovalDecision>((resolve) => {
        const stop = (): void => {
          aborted = true;
          resolve({ kind: "deny", note: "not answered before the turn was aborted; the confirmation stays pending for 3 turns" });
        };
        if (signal.aborted) stop();
        else signal.addEventListener("abort", stop, { once: true });
      });
      return Promise.race([answered, onAbort]);
    },
    beginTurn(next) {
      turn = next;
      const expired: PendingConfirmation[] = [];
      for (const [id, entry] of pending) {
        if (turn >= entry.expiresAtTurn) {
          pending.delete(id);
          const { call: _call, ...visible } = entry;
          expired.push(visible);
        }
      }
      for (const [key, expiresAt] of lateApprovals) if (turn >= expiresAt) lateApprovals.delete(key);
      return expired;
    },
    pending: () => [...pending.values()].map(({ call: _call, ...visible }) => visible),
    answer(callId, decision) {
      const entry = pending.get(callId);
      if (!entry || turn >= entry.expiresAtTurn) return false;
      record(callId, decision, true);
      return true;
    },
    sessionAllowances: describeAllowances,
  };
}
