/**
 * The commands the REPL offers: the core's list plus the few the UI answers itself. The UI-owned
 * ones never reach `controller.runCommand`.
 */
import type { CommandOutput } from "../../agent/front-end-contract.ts";

export interface CommandInfo {
  name: string;
  usage: string;
  description: string;
}

/** Answered by the UI: they need no core state (or act on the UI itself). */
export const UI_COMMANDS: readonly CommandInfo[] = [
  { name: "help", usage: "help", description: "list commands and keys" },
  { name: "exit", usage: "exit", description: "leave valarmind (also Ctrl+D)" },
];

/** Aliases resolved before dispatch. */
const ALIASES: Record<string, string> = { quit: "exit", q: "exit", "?": "help" };

export function resolveAlias(name: string): string {
  return ALIASES[name] ?? name;
}

export function commandCatalog(core: readonly CommandInfo[]): CommandInfo[] {
  const seen = new Set(UI_COMMANDS.map((command) => command.name));
  const merged = [...UI_COMMANDS, ...core.filter((command) => !seen.has(command.name))];
  return merged.sort((a, b) => a.name.localeCompare(b.name));
}

const KEYS: readonly string[] = [
  "Enter send · Alt+Enter, Shift+Enter or Ctrl+J new line · a trailing \\ before Enter also adds a line",
  "↑/↓ history (per repository) · Tab or Enter accepts a completion · @path completes files",
  "Esc or Ctrl+C interrupts a turn · Ctrl+C twice on an empty prompt or Ctrl+D exits",
  "Ctrl+A/E line start/end · Ctrl+U/K delete to start/end · Ctrl+W delete word",
];

/** `/goal TEXT`: the core writes usages with their slash, the UI's own without; show one slash either way. */
export function slashUsage(usage: string): string {
  return `/${usage.replace(/^\/+/, "")}`;
}

export function helpOutput(catalog: readonly CommandInfo[]): CommandOutput {
  const usages = catalog.map((command) => slashUsage(command.usage));
  const width = Math.max(...usages.map((usage) => usage.length)) + 1;
  return {
    title: "Commands",
    lines: [...catalog.map((command, i) => `${(usages[i] ?? "").padEnd(width)} ${command.description}`), "", "Keys", ...KEYS],
  };
}
