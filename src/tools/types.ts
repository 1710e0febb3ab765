/**
 * A tool is a small factory result (`defineTool`, define-tool.ts): name, description, TypeBox
 * parameters, `execute`, and the facts memory and approvals need (kind, the paths a call touches,
 * its working-set priority). The registry validates arguments, confines paths, asks for approval,
 * truncates output and records those facts on the outcome; a tool only does its job.
 */
export type ToolKind = "read" | "write" | "shell" | "memory" | "external";

/** A workspace path a call touches, as the model named it (normalized, workspace-relative). */
export interface ToolLocation {
  path: string;
  access: "read" | "write";
}

export interface ToolContext {
  /** Absolute workspace root (its real path); every path argument is resolved and confined under it. */
  root: string;
  signal: AbortSignal;
  /** The model's id for this call; names the files a call leaves (a command's full output). */
  callId?: string;
  /** The session's directory for full tool outputs; absent in tests and listings (then only head and tail are kept). */
  outputDir?: string;
}

export interface ToolResult {
  /** What the model sees (a summary or the content, before central truncation). */
  forModel: string;
  /** What the user sees in the UI: one line. */
  summary: string;
  /** A unified diff for edits, shown in the UI and approval prompt. */
  diff?: string;
  isError: boolean;
  /** For memory tools: what changed in the working state, one line ("goal: "" → "ship v1""). */
  memoryChange?: string;
}

/**
 * A mutating call worked out but not yet applied, so the approval prompt shows exactly what will
 * happen (the diff is computed before anything is written).
 */
export interface PreparedCall {
  ready: true;
  /** The kind that decides approval for this call (a decision that also writes an ADR is a write). */
  kind: ToolKind;
  description: string;
  diff?: string;
  /** run_shell: the whole command, shown in the approval when `description` shows only its start. */
  command?: string;
  /**
   * Why this call must ask even where the approval mode would allow it (a git hook, a file with
   * several hard links); only full-auto skips the question.
   */
  escalate?: string;
  /** With `escalate`: ask in full-auto too (a shell command that cannot be sandboxed). */
  askEvenInFullAuto?: boolean;
  /** The user's own settings allow this call without asking (an MCP server in `mcp.allow`); an escalated call still asks. */
  allowedBySettings?: boolean;
  /**
   * Workspace-relative files `apply` writes besides the call's write locations (an ADR whose name
   * is chosen in `prepare`): checkpointed before it runs, like the locations (ADR 0081).
   */
  writes?: readonly string[];
  /** What this call may change that no checkpoint sees (a shell command that can write): its command line. */
  untrackedEffects?: string;
  apply(): Promise<ToolResult>;
}

/**
 * Where the registry keeps what a call is about to write, so the turn can be undone (ADR 0081):
 * `beforeWrite` has stored the files' content when it resolves (a failure stops the write),
 * `afterWrite` records what the call left, `untracked` names effects no checkpoint holds.
 */
export interface FileCheckpoints {
  beforeWrite(paths: readonly string[]): Promise<void>;
  afterWrite(paths: readonly string[]): Promise<void>;
  untracked(what: string): Promise<void>;
}

/** `prepare` either returns a call ready to apply or a result that ends the call (an error). */
export type Preparation = PreparedCall | { ready: false; result: ToolResult };

/** Runs a prepared call without asking (what `execute` of a preparing tool does); an error result ends it. */
export async function applyPreparation(preparation: Promise<Preparation>): Promise<ToolResult> {
  const prepared = await preparation;
  return prepared.ready ? prepared.apply() : prepared.result;
}

/**
 * A tool as the registry holds it: arguments are erased to a record because the registry
 * validates them against `parameters` before calling. Build tools with `defineTool`, which
 * checks every member against the arguments' TypeBox type.
 */
export interface Tool {
  name: string;
  description: string;
  kind: ToolKind;
  /** JSON Schema (draft 2020-12) for the arguments object; sent to the model (strict form). */
  parameters: Record<string, unknown>;
  /**
   * The schema is someone else's (an MCP server's): sent to the model as it is (not strict) and
   * validated by its owner, so the registry checks only that the arguments are a JSON object.
   */
  foreignSchema?: boolean;
  /**
   * Argument names that hold workspace paths. The registry confines them (no `..`, absolute or
   * symlink escapes) and hands `execute`/`prepare` the resolved absolute paths.
   */
  pathArgs?: readonly string[];
  /** The paths a call touches, from its validated (unconfined) arguments; none when absent. */
  locations?: (args: Record<string, unknown>) => ToolLocation[];
  /** Long outputs enter the working set with this priority; absent: they are not kept there. */
  workingSetPriority?: number;
  /** A one-line description of what a call would do, for approval prompts ("edit src/a.ts"). */
  describe: (args: Record<string, unknown>) => string;
  /** Mutating tools compute their change here without applying it; the registry asks, then applies. */
  prepare?: (args: Record<string, unknown>, ctx: ToolContext) => Promise<Preparation>;
  execute: (args: Record<string, unknown>, ctx: ToolContext) => Promise<ToolResult>;
}

/** What one registry call produced: for the model, the UI and the transcript. */
export interface ToolCallOutcome {
  callId: string;
  name: string;
  /** The one-line target ("edit src/a.ts"), also used for `tool_call_start`. */
  target: string;
  /** Goes back to the model as the function_call_output and into the prompt summary; truncated. */
  forModel: string;
  /** One line for the UI. */
  summary: string;
  /** The full, untruncated result, for the session transcript. */
  raw: string;
  diff?: string;
  isError: boolean;
  /** True when approval was refused (by the user, or headless policy); nothing was executed. */
  denied: boolean;
  /** Time spent executing the tool (approval wait excluded). */
  durationMs: number;
  /** Set when central truncation cut the output. */
  truncated?: { cutBytes: number; cutLines: number };
  /** Set when a memory tool changed the working state. */
  memoryChange?: string;
  /** The tool's kind; absent when the call named no known tool. */
  kind?: ToolKind;
  /** The paths the call touches (from valid arguments; empty when they were invalid). */
  locations: ToolLocation[];
  /** Set when a long output of this call may enter the working set, with this priority. */
  workingSetPriority?: number;
}
