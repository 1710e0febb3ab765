/** What opening an AgentSession takes, what a message may carry, and what the last request was (./session.ts). */
import type { Settings } from "../config/settings-schema.ts";
import type { McpToolSet } from "../mcp/start-servers.ts";
import type { ResumeTarget } from "../memory/session-memory.ts";
import type { Summarizer } from "../memory/summary.ts";
import type { ModelClient } from "../model/types.ts";
import type { ImageFileAttachment } from "../prompt/attachment-files.ts";
import type { BusySessionPolicy } from "../session/session-lock.ts";

export interface AgentSessionOptions {
  root: string;
  settings: Settings;
  model: ModelClient;
  /** False for headless runs: approvals cannot be asked, so mutating calls follow the mode or are refused. */
  interactive: boolean;
  resume: ResumeTarget;
  /** Overrides the model-backed summarizer (tests, offline runs). */
  summarizer?: Summarizer;
  /**
   * When the session to resume is in use by another process: wait up to `waitMs` (headless
   * `--continue`), then fork. Default: fork at once (the REPL), ADR 0072.
   */
  busySession?: BusySessionPolicy;
  /** The run's MCP servers: their tools follow the built-in ones, their notices are told. The run closes them. */
  mcp?: McpToolSet;
  /** Where the run started: AGENTS.md files are read from the workspace root down to it, `@path` is resolved from it. Default: the process's. */
  cwd?: string;
  /** False (`--no-context-files`): no instruction file is read; only the core rules instruct. */
  contextFiles?: boolean;
}

/** What comes with a message besides its text. */
export interface SubmitOptions {
  /** Images given outside the message (`chat -p --image`), already read and checked. */
  images?: readonly ImageFileAttachment[];
  /** What the user typed when the message is its expansion (a custom command's `/NAME ARGS`): recorded, so a resume shows it. */
  typed?: string;
}

export interface LastRequestInfo {
  manifestPath: string;
  totalTokens: number;
  budgetTokens: number;
  stablePrefixTokens: number;
  cachedShare: number | undefined;
}
