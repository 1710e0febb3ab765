/**
 * A tool is a small factory result: name, description, JSON-schema parameters and `execute`.
 * The registry validates arguments, confines paths, asks for approval and truncates output;
 * a tool only does its job.
 */
export type ToolKind = "read" | "write" | "shell" | "memory";

export interface ToolContext {
  /** Absolute workspace root; every path argument is resolved and confined under it. */
  root: string;
  signal: AbortSignal;
}

export interface ToolResult {
  /** What the model sees (a summary or the content, before central truncation). */
  forModel: string;
  /** What the user sees in the UI: one line. */
  summary: string;
  /** A unified diff for edits, shown in the UI and approval prompt. */
  diff?: string;
  isError: boolean;
}

export interface Tool<Args = Record<string, unknown>> {
  name: string;
  description: string;
  kind: ToolKind;
  /** JSON Schema (draft 2020-12) for the arguments object. */
  parameters: Record<string, unknown>;
  /** A one-line description of what a call would do, for approval prompts ("edit src/a.ts"). */
  describe(args: Args): string;
  execute(args: Args, ctx: ToolContext): Promise<ToolResult>;
}
