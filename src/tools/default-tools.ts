/** The tool set valarmind offers the model, in the order the model sees it (stable for caching). */
import type { Settings } from "../config/settings-schema.ts";
import { createEditFileTool } from "./edit-file.ts";
import { createGrepTool, type GrepToolOptions } from "./grep.ts";
import { createListFilesTool } from "./list-files.ts";
import { createRecordDecisionTool } from "./memory-decision.ts";
import type { MemoryStore } from "./memory-store.ts";
import { createSetConventionTool, createSetGoalTool, createSetNowTool, createTaskTool } from "./memory-tools.ts";
import { createReadFileTool } from "./read-file.ts";
import { createRecallTurnTool, type TranscriptSource } from "./recall-turn.ts";
import { createRunShellTool } from "./run-shell.ts";
import type { Tool } from "./types.ts";
import { createWriteFileTool } from "./write-file.ts";

export interface DefaultToolOptions {
  settings: Pick<Settings, "shellTimeoutMs"> & Partial<Pick<Settings, "sandbox" | "network" | "shellEnv" | "shellProcessLimit">>;
  /** Called when a memory tool runs (not when specs are listed), so offline use needs no store. */
  memoryStore: () => MemoryStore;
  grep?: GrepToolOptions;
  shell?: ShellToolOptions;
  /** The session's transcript, for recall_turn; without it the tool says there is none. */
  transcript?: TranscriptSource;
}

/** For tests: where bwrap is (a missing path simulates a machine without bubblewrap). */
export interface ShellToolOptions {
  bwrapPath?: string;
}

/** A tool of any argument type; the registry validates arguments against its schema before calling. */
export type AnyTool = Tool;

export function createDefaultTools(options: DefaultToolOptions): AnyTool[] {
  return [
    createReadFileTool(),
    createListFilesTool(),
    createGrepTool(options.grep),
    createEditFileTool(),
    createWriteFileTool(),
    createRunShellTool({
      timeoutMs: options.settings.shellTimeoutMs,
      ...(options.settings.sandbox !== undefined ? { sandbox: options.settings.sandbox } : {}),
      ...(options.settings.network !== undefined ? { network: options.settings.network } : {}),
      ...(options.settings.shellEnv !== undefined ? { shellEnv: options.settings.shellEnv } : {}),
      ...(options.settings.shellProcessLimit !== undefined ? { processLimit: options.settings.shellProcessLimit } : {}),
      ...(options.shell?.bwrapPath !== undefined ? { bwrapPath: options.shell.bwrapPath } : {}),
    }),
    createSetGoalTool(options.memoryStore),
    createSetNowTool(options.memoryStore),
    createTaskTool(options.memoryStore),
    createRecordDecisionTool(options.memoryStore),
    createSetConventionTool(options.memoryStore),
    createRecallTurnTool(options.transcript),
  ];
}
