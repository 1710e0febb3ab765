/**
 * The tool registry: one place that, for every call, parses and validates the arguments against
 * the tool's JSON schema, confines path arguments to the workspace, works out a mutating change
 * before asking for approval (so the user approves the diff that will be applied), runs the tool,
 * truncates its output for the model, and returns the raw result for the transcript. Each
 * outcome carries the tool's own facts (kind, the paths the call touches, its working-set
 * priority), which memory reads instead of guessing from tool names.
 * `run` never throws: every failure is an outcome the model can act on.
 */
import { realpathSync } from "node:fs";
import { workspacePaths } from "../config/paths.ts";
import type { Settings } from "../config/settings-schema.ts";
import { describeError } from "../errors.ts";
import type { ApprovalDecision } from "../agent/events.ts";
import type { FunctionToolSpec, ToolCallRequest } from "../model/types.ts";
import { countTokensIfReady } from "../tokens/tokenizer.ts";
import { createStateStore } from "../store/create-state-store.ts";
import { createApprovalGate, type ApprovalGate, type ApprovalSubject, type AskApproval } from "./approvals.ts";
import { parseArguments } from "./arguments.ts";
import { factsOfCall, factsOfTool, registerToolFacts, type CallFacts } from "./call-facts.ts";
import { confinePath, PathEscapeError } from "./confine.ts";
import { createDefaultTools, type AnyTool, type ShellToolOptions } from "./default-tools.ts";
import { permissionProblem } from "./file-access-problem.ts";
import type { GrepToolOptions } from "./grep.ts";
import type { MemoryStore } from "./memory-store.ts";
import { toStrictParameters } from "./strict-schema.ts";
import { truncateHeadTail, type TokenCounter } from "./truncate.ts";
import type { TranscriptSource } from "./recall-turn.ts";
import type { FileCheckpoints, Preparation, PreparedCall, ToolCallOutcome, ToolContext, ToolLocation, ToolResult } from "./types.ts";

export interface ToolRegistryOptions {
  root: string;
  settings: Pick<Settings, "approvals" | "toolOutputTokens" | "shellTimeoutMs"> & Partial<Pick<Settings, "sandbox" | "network" | "shellEnv" | "shellProcessLimit">>;
  /** False for headless runs: a call that would ask is refused (default false). */
  interactive?: boolean;
  /** A gate to share (e.g. with /approvals); by default one is made from settings.approvals. */
  approvals?: ApprovalGate;
  /** Default approval callback; `run`'s ctx.ask takes precedence. */
  ask?: AskApproval;
  /** Defaults to the workspace's StateStore. */
  stateStore?: MemoryStore;
  grep?: GrepToolOptions;
  shell?: ShellToolOptions;
  /** Exact token counts for truncation; defaults to the tokenizer if already loaded, else bytes. */
  countTokens?: TokenCounter;
  /** Replaces the default tool set (tests). */
  tools?: AnyTool[];
  /** Offered after the default tools, in this order (an MCP server's tools). */
  extraTools?: readonly AnyTool[];
  /** Where tools keep a call's full output (the session's `outputs/`); without it only head and tail are kept. */
  outputDir?: string;
  /** Snapshots of the files a call writes, taken before it writes (undo, ADR 0081); without it nothing is kept. */
  checkpoints?: FileCheckpoints;
  /** The session's transcript file (recall_turn reads earlier turns from it). */
  transcript?: TranscriptSource;
}

export interface ToolRunContext {
  signal: AbortSignal;
  /** Asks the user; the agent turns it into an `approval_request` event. */
  ask?: AskApproval;
}

export interface ToolRegistry {
  readonly root: string;
  readonly approvals: ApprovalGate;
  specs(): FunctionToolSpec[];
  /** The one-line target of a call for `tool_call_start` ("edit src/a.ts"); the tool name if unparsable. */
  target(call: ToolCallRequest): string;
  run(call: ToolCallRequest, ctx: ToolRunContext): Promise<ToolCallOutcome>;
}

const SPEC_DEFAULTS: Pick<Settings, "shellTimeoutMs"> = { shellTimeoutMs: 120_000 };
/** What the registry checks of a foreign schema's arguments; their owner validates the rest. */
const ANY_OBJECT: Record<string, unknown> = { type: "object" };

export function specsOf(tools: readonly AnyTool[]): FunctionToolSpec[] {
  return tools.map((tool) => {
    const { parameters, strict } = tool.foreignSchema === true ? { parameters: tool.parameters, strict: false } : toStrictParameters(tool.parameters);
    return { type: "function", name: tool.name, description: tool.description, parameters, strict };
  });
}

/** The tool specs without a workspace (for `prompt --dry-run`); identical to a registry's specs. */
export function toolSpecs(settings: Pick<Settings, "shellTimeoutMs"> = SPEC_DEFAULTS): FunctionToolSpec[] {
  const noStore = (): MemoryStore => {
    throw new Error("toolSpecs() tools are for listing only");
  };
  return specsOf(createDefaultTools({ settings, memoryStore: noStore }));
}

/** JSON with sorted keys, so the same arguments always give the same approval key. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/** The workspace-relative real paths a prepared call writes: its write locations and the files it names itself. */
function writtenPaths(root: string, locations: readonly ToolLocation[], prepared: PreparedCall): string[] {
  const named = [...locations.filter((l) => l.access === "write").map((l) => l.path), ...(prepared.writes ?? [])];
  const rels = new Set<string>();
  for (const path of named) {
    try {
      rels.add(confinePath(root, path, { forWrite: true }).rel);
    } catch (error) {
      // A path the confinement refuses is one the call cannot write either.
      if (!(error instanceof PathEscapeError)) throw error;
    }
  }
  return [...rels];
}

export function createToolRegistry(options: ToolRegistryOptions): ToolRegistry {
  const root = realpathSync(options.root);
  let store: MemoryStore | undefined = options.stateStore;
  const memoryStore = (): MemoryStore => (store ??= createStateStore(workspacePaths(root)));
  const tools = [
    ...(options.tools ?? createDefaultTools({ settings: options.settings, memoryStore, grep: options.grep, shell: options.shell, transcript: options.transcript })),
    ...(options.extraTools ?? []),
  ];
  const byName = new Map(tools.map((t) => [t.name, t]));
  // A resumed session rebuilds memory from records that name these tools; their facts must be found.
  registerToolFacts(tools);
  const gate = options.approvals ?? createApprovalGate({ mode: options.settings.approvals, interactive: options.interactive ?? false });
  const countTokens = options.countTokens ?? countTokensIfReady;
  const specs = specsOf(tools);

  function target(call: ToolCallRequest): string {
    const tool = byName.get(call.name);
    if (!tool) return call.name;
    try {
      const args: unknown = JSON.parse(call.arguments || "{}");
      return typeof args === "object" && args !== null ? tool.describe(args as Record<string, unknown>) : call.name;
    } catch {
      return call.name;
    }
  }

  function finish(
    call: ToolCallRequest,
    shown: string,
    result: ToolResult,
    extra: { denied?: boolean; durationMs?: number; facts?: CallFacts } = {},
  ): ToolCallOutcome {
    // Well-formed text only: a lone surrogate (half an emoji cut anywhere) makes the request JSON servers refuse, in every later request too.
    const cut = truncateHeadTail(result.forModel.toWellFormed(), options.settings.toolOutputTokens, countTokens);
    const outcome: ToolCallOutcome = {
      callId: call.callId,
      name: call.name,
      target: shown,
      forModel: cut.text,
      summary: result.summary,
      raw: result.forModel,
      isError: result.isError,
      denied: extra.denied ?? false,
      durationMs: extra.durationMs ?? 0,
      locations: extra.facts?.locations ?? [],
    };
    if (extra.facts) outcome.kind = extra.facts.kind;
    if (extra.facts?.workingSetPriority !== undefined) outcome.workingSetPriority = extra.facts.workingSetPriority;
    if (result.diff !== undefined) outcome.diff = result.diff;
    if (cut.cutBytes > 0) outcome.truncated = { cutBytes: cut.cutBytes, cutLines: cut.cutLines };
    if (result.memoryChange !== undefined) outcome.memoryChange = result.memoryChange;
    return outcome;
  }

  const failure = (forModel: string, summary: string): ToolResult => ({ forModel, summary, isError: true });

  async function approve(
    call: ToolCallRequest,
    prepared: Extract<Preparation, { ready: true }>,
    args: Record<string, unknown>,
    ctx: ToolRunContext,
  ): Promise<{ allowed: true } | { allowed: false; result: ToolResult }> {
    const subject: ApprovalSubject = { name: call.name, argsKey: canonicalJson(args) };
    if (prepared.kind === "shell" && typeof args.command === "string") subject.command = args.command;
    if (prepared.escalate !== undefined) subject.escalate = prepared.escalate;
    if (prepared.askEvenInFullAuto === true) subject.askEvenInFullAuto = true;
    if (prepared.allowedBySettings === true) subject.allowedBySettings = true;
    const verdict = gate.decide(subject, prepared.kind);
    if (verdict === "allow") return { allowed: true };
    const ask = ctx.ask ?? options.ask;
    if (verdict === "deny" || !ask) {
      return { allowed: false, result: failure(`Refused: ${gate.refusal(subject, prepared.kind)}`, `refused (no terminal to ask): ${prepared.description}`) };
    }
    const request = {
      callId: call.callId,
      name: call.name,
      description: prepared.description,
      ...(prepared.diff !== undefined ? { diff: prepared.diff } : {}),
      ...(prepared.command !== undefined ? { command: prepared.command } : {}),
    };
    const decision: ApprovalDecision = await gate.confirm(request, subject, ask, ctx.signal);
    if (decision.kind !== "deny") return { allowed: true };
    const note = decision.note ? ` (${decision.note})` : "";
    return {
      allowed: false,
      result: failure(
        `Denied: the user did not approve "${prepared.description}"${note}. Nothing was done. Do not repeat the same call; ask the user how to proceed or take another approach.`,
        `denied: ${prepared.description}`,
      ),
    };
  }

  async function run(call: ToolCallRequest, ctx: ToolRunContext): Promise<ToolCallOutcome> {
    const tool = byName.get(call.name);
    if (!tool) {
      const names = tools.map((t) => t.name).join(", ");
      return finish(call, call.name, failure(`Error: there is no tool named "${call.name}". Available tools: ${names}.`, `unknown tool ${call.name}`));
    }
    let shown = call.name;
    // Invalid arguments touched nothing; valid ones name the call's locations.
    let facts: CallFacts = factsOfTool(tool);
    try {
      const parsed = await parseArguments(tool.name, tool.foreignSchema === true ? ANY_OBJECT : tool.parameters, call.arguments);
      if (!parsed.ok) return finish(call, call.name, failure(parsed.message, `${tool.name}: invalid arguments`), { facts });
      const args = parsed.args;
      facts = factsOfCall(tool, args);
      shown = tool.describe(args);
      if (ctx.signal.aborted) return finish(call, shown, failure("Aborted before the tool ran.", `${shown}: aborted`), { facts });
      const confined: Record<string, unknown> = { ...args };
      const named: Record<string, unknown> = { ...args };
      for (const name of tool.pathArgs ?? []) {
        const value = args[name];
        if (typeof value !== "string") continue;
        const path = confinePath(root, value, { forWrite: tool.kind === "write" });
        confined[name] = path.abs;
        named[name] = path.rel;
      }
      // Facts name files workspace-relative, however the model wrote them (an absolute path read
      // and a relative path edited are one file: the edit makes the read stale).
      if ((tool.pathArgs ?? []).length > 0) facts = factsOfCall(tool, named);
      const toolCtx: ToolContext = { root, signal: ctx.signal, callId: call.callId, ...(options.outputDir !== undefined ? { outputDir: options.outputDir } : {}) };
      const prepared: Preparation = tool.prepare
        ? await tool.prepare(confined, toolCtx)
        : { ready: true, kind: tool.kind, description: shown, apply: () => tool.execute(confined, toolCtx) };
      if (!prepared.ready) return finish(call, shown, prepared.result, { facts });
      const approval = await approve(call, prepared, args, ctx);
      if (!approval.allowed) {
        const withDiff = prepared.diff !== undefined ? { ...approval.result, diff: prepared.diff } : approval.result;
        return finish(call, shown, withDiff, { denied: true, facts });
      }
      const checkpoints = options.checkpoints;
      const writes = checkpoints ? writtenPaths(root, facts.locations, prepared) : [];
      if (checkpoints && writes.length > 0) {
        try {
          await checkpoints.beforeWrite(writes);
        } catch (error) {
          const why = describeError(error);
          return finish(call, shown, failure(`Error: could not save a checkpoint of ${writes.join(", ")} before writing (${why}); nothing was written.`, `${shown}: not written (no checkpoint: ${why})`), { facts });
        }
      }
      if (checkpoints && prepared.untrackedEffects !== undefined) await checkpoints.untracked(prepared.untrackedEffects);
      const started = performance.now();
      try {
        const result = await prepared.apply();
        return finish(call, shown, result, { durationMs: Math.round(performance.now() - started), facts });
      } finally {
        if (checkpoints && writes.length > 0) await checkpoints.afterWrite(writes);
      }
    } catch (error) {
      // A path outside the workspace was refused, so the call touched no workspace file.
      if (error instanceof PathEscapeError) return finish(call, shown, failure(`Error: ${error.message}.`, `${shown}: refused (outside the workspace)`), { facts: { ...facts, locations: [] } });
      // A file tool refused by the file system (behind an unreadable directory, say) names the path.
      const denied = tool.kind === "read" || tool.kind === "write" ? permissionProblem(error, root) : undefined;
      if (denied) return finish(call, shown, failure(`Error: ${denied.message}.`, `${shown}: permission denied`), { facts });
      return finish(call, shown, failure(`Error: ${tool.name} failed: ${describeError(error)}`, `${shown}: failed (${describeError(error)})`), { facts });
    }
  }

  return { root, approvals: gate, specs: () => specs, target, run };
}
