/**
 * The approval gate. Modes: `suggest` (default: ask before any write or shell command),
 * `auto-edit` (file writes allowed, shell asks), `full-auto` (everything allowed). Reads and the
 * memory tools never ask (they touch only valarmind's own state; see docs/adr/0030).
 *
 * Answers "allow for this session" are remembered per tool, and for run_shell per command prefix
 * ("bun test"). A confirmation left unanswered when the turn ends (the user moved on) stays
 * pending for 3 turns (seed 002's PendingConfirmation): a late "allow" then approves exactly that
 * call should the model repeat it; after that it expires. Without a terminal nothing can be asked,
 * so a call that would ask is refused with a message naming the flag that allows it.
 */
import type { ApprovalMode } from "../agent/controller.ts";
import type { ApprovalDecision } from "../agent/events.ts";
import type { ToolKind } from "./types.ts";

export type { ApprovalMode };
export type ApprovalVerdict = "allow" | "ask" | "deny";

export const APPROVAL_MODES: readonly ApprovalMode[] = ["suggest", "auto-edit", "full-auto"];
/** Turns after which an unanswered confirmation expires (seed 002: timeout_turns = 3). */
export const CONFIRMATION_EXPIRY_TURNS = 3;

export interface ApprovalSubject {
  name: string;
  /** run_shell's command line (session allowances match its prefix). */
  command?: string;
  /** Canonical JSON of the arguments: a late approval covers exactly this call. */
  argsKey: string;
}

/** What the agent's `ask` callback receives; it becomes an `approval_request` event. */
export interface ApprovalRequest {
  callId: string;
  name: string;
  description: string;
  diff?: string;
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
  /** Asks (through `ask`) and records the answer; an abort leaves the confirmation pending. */
  confirm(request: ApprovalRequest, call: ApprovalSubject, ask: AskApproval, signal: AbortSignal): Promise<ApprovalDecision>;
  /** Call at the start of each user turn; returns the confirmations that expired now. */
  beginTurn(turn: number): PendingConfirmation[];
  pending(): PendingConfirmation[];
  /** Answers a pending confirmation after its turn ended (e.g. `/approve`); false if unknown or expired. */
  answer(callId: string, decision: ApprovalDecision): boolean;
  /** Human-readable allowances granted this session ("run_shell: bun test", "edit_file"). */
  sessionAllowances(): string[];
}

export interface ApprovalGateOptions {
  mode: ApprovalMode;
  /** False for headless runs: nothing can be asked. */
  interactive: boolean;
}

// Command lines that chain, substitute or redirect never match a prefix allowance.
const SHELL_META = /[;&|`$<>\n\r]/;

/** "bun test test/x.ts" → "bun test"; "ls -la" → "ls"; undefined for compound commands. */
export function commandPrefix(command: string): string | undefined {
  const trimmed = command.trim();
  if (trimmed === "" || SHELL_META.test(trimmed)) return undefined;
  const [first, second] = trimmed.split(/\s+/);
  if (first === undefined) return undefined;
  return second !== undefined && /^[A-Za-z][\w:.-]*$/.test(second) ? `${first} ${second}` : first;
}

function prefixMatches(prefix: string, command: string): boolean {
  const trimmed = command.trim();
  if (SHELL_META.test(trimmed)) return false;
  const words = trimmed.split(/\s+/);
  return prefix.split(" ").every((word, i) => words[i] === word);
}

function needsAsking(mode: ApprovalMode, kind: ToolKind): boolean {
  if (kind === "read" || kind === "memory") return false;
  if (kind === "write") return mode === "suggest";
  return mode !== "full-auto";
}

export function createApprovalGate(options: ApprovalGateOptions): ApprovalGate {
  let mode = options.mode;
  let turn = 0;
  const toolAllowances = new Set<string>();
  const shellPrefixes = new Set<string>();
  const shellExact = new Set<string>();
  const pending = new Map<string, PendingConfirmation & { call: ApprovalSubject }>();
  /** Exact calls approved late, keyed by name + argsKey, valid until their turn of expiry. */
  const lateApprovals = new Map<string, number>();

  const exactKey = (call: ApprovalSubject): string => `${call.name}\0${call.argsKey}`;

  function allowForSession(call: ApprovalSubject): void {
    if (call.command === undefined) {
      toolAllowances.add(call.name);
      return;
    }
    const prefix = commandPrefix(call.command);
    if (prefix) shellPrefixes.add(prefix);
    else shellExact.add(call.command.trim());
  }

  function allowedBySession(call: ApprovalSubject): boolean {
    if (call.command === undefined) return toolAllowances.has(call.name);
    if (shellExact.has(call.command.trim())) return true;
    return [...shellPrefixes].some((p) => prefixMatches(p, call.command ?? ""));
  }

  function record(callId: string, decision: ApprovalDecision, late: boolean): void {
    const entry = pending.get(callId);
    if (!entry) return;
    pending.delete(callId);
    if (decision.kind === "allow_session") allowForSession(entry.call);
    else if (decision.kind === "allow_once" && late) lateApprovals.set(exactKey(entry.call), entry.expiresAtTurn);
  }

  return {
    interactive: options.interactive,
    mode: () => mode,
    setMode(next) {
      mode = next;
    },
    decide(call, kind) {
      if (!needsAsking(mode, kind)) return "allow";
      if (allowedBySession(call)) return "allow";
      const late = lateApprovals.get(exactKey(call));
      if (late !== undefined && turn < late) return "allow";
      return options.interactive ? "ask" : "deny";
    },
    refusal(call, kind) {
      const what = kind === "shell" ? "run a shell command" : "change files";
      const flag = kind === "shell" ? "--approvals full-auto" : "--approvals auto-edit";
      return (
        `${call.name} would ${what}, which needs approval in '${mode}' mode, but there is no terminal to ask (headless run). ` +
        `Nothing was done. To allow it, re-run with ${flag} (or --yes to allow every tool call).`
      );
    },
    async confirm(request, call, ask, signal) {
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
    sessionAllowances: () => [...toolAllowances, ...[...shellPrefixes].map((p) => `run_shell: ${p}`), ...[...shellExact].map((c) => `run_shell: exactly \`${c}\``)],
  };
}
