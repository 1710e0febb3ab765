/**
 * The one catalogue of slash commands: name, usage, description, aliases and where each runs —
 * answered by the front end itself (`ui`: it needs no core state or acts on the UI, like /exit),
 * by the core's `ChatController.runCommand` (`core`), or sent as a message (`prompt`: the user's
 * custom commands, which the core expands in `submit`). Completion, /help and both dispatchers
 * (the REPL's and the core's) read this list; front ends get it from `ChatController.commands()`.
 * Pure data and functions: no I/O, no UI imports.
 */
import type { CustomCommand } from "./custom-commands.ts";
import type { CommandOutput } from "./front-end-contract.ts";

export type SlashCommandSite = "ui" | "core" | "prompt";

export interface SlashCommandInfo {
  name: string;
  /** With its slash and arguments: `/goal TEXT`. */
  usage: string;
  description: string;
  runs: SlashCommandSite;
  /** Other names typed for it (`/quit` for /exit); not offered by completion. */
  aliases?: readonly string[];
}

/** In alphabetical order: /help and completion list the commands as they stand here. */
export const SLASH_CATALOG = [
  { name: "approvals", usage: "/approvals [MODE]", description: "show or set approvals: suggest, auto-edit, full-auto", runs: "core" },
  { name: "clear", usage: "/clear", description: "start a new session (the working state is kept)", runs: "core" },
  { name: "compact", usage: "/compact", description: "fold the conversation into the summary and rewrite state.toon; shows tokens before/after", runs: "core" },
  { name: "cost", usage: "/cost", description: "this session's tokens: cached share, effective input, a price estimate when prices are set", runs: "core" },
  { name: "decide", usage: "/decide TITLE -- WHY", description: "record a decision (ADR-NNNN) and why", runs: "core" },
  { name: "exit", usage: "/exit", description: "leave valarmind (also Ctrl+D)", runs: "ui", aliases: ["quit", "q"] },
  { name: "goal", usage: "/goal TEXT", description: "set the project goal", runs: "core" },
  { name: "help", usage: "/help", description: "list the commands and keys", runs: "ui" },
  { name: "manifest", usage: "/manifest [N]", description: "the last (or Nth) request's manifest: items, tokens, reasons, cuts", runs: "core" },
  { name: "model", usage: "/model [NAME]", description: "show or switch the model", runs: "core" },
  { name: "now", usage: "/now TEXT", description: "set what is being done now", runs: "core" },
  { name: "redo", usage: "/redo [--force]", description: "write again the files the last /undo gave back", runs: "core" },
  { name: "resume", usage: "/resume [ID]", description: "switch to another session of this workspace (without an id: pick one)", runs: "core" },
  { name: "sessions", usage: "/sessions", description: "list this workspace's sessions", runs: "core" },
  { name: "state", usage: "/state", description: "show the working state (goal, now, tasks, decisions, blockers, conventions)", runs: "core" },
  { name: "status", usage: "/status", description: "what this session runs with: folder trust, model endpoint, approvals, shell sandbox and limits, memory, MCP", runs: "core" },
  { name: "summary", usage: "/summary", description: "the rolling summary of turns that left the window", runs: "core" },
  { name: "task", usage: "/task add TITLE | start ID | done ID | block ID REASON", description: "edit the open tasks", runs: "core" },
  { name: "undo", usage: "/undo [--force]", description: "give back the files the last turn changed (again: one more turn back)", runs: "core" },
  { name: "window", usage: "/window", description: "what the sliding window holds", runs: "core" },
] as const satisfies readonly SlashCommandInfo[];

export type SlashCatalogEntry = (typeof SLASH_CATALOG)[number];
export type SlashCommandName = SlashCatalogEntry["name"];
/** The commands `ChatController.runCommand` carries out. */
export type CoreCommandName = Extract<SlashCatalogEntry, { runs: "core" }>["name"];

/** The REPL's keys, the second part of /help. */
export const KEY_HELP: readonly string[] = [
  "Enter send · Alt+Enter, Shift+Enter or Ctrl+J new line · a trailing \\ before Enter also adds a line",
  "↑/↓ history (per repository) · Tab or Enter accepts a completion · @path completes files",
  "Esc or Ctrl+C interrupts a turn · Ctrl+C twice on an empty prompt or Ctrl+D exits",
  "Ctrl+A/E line start/end · Ctrl+U/K delete to start/end · Ctrl+W delete word",
];

/** The catalogue with the custom commands (`runs: "prompt"`) in it, all in alphabetical order. */
export function catalogWithCustomCommands(custom: readonly CustomCommand[]): readonly SlashCommandInfo[] {
  if (custom.length === 0) return SLASH_CATALOG;
  const entries = custom.map(
    (command): SlashCommandInfo => ({ name: command.name, usage: `/${command.name} [ARGS]`, description: `${command.description} (${command.scope} command)`, runs: "prompt" }),
  );
  return [...SLASH_CATALOG, ...entries].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** Names a custom command may not take: every built-in command's name and alias. */
export function builtInCommandNames(): string[] {
  return SLASH_CATALOG.flatMap((command: SlashCommandInfo) => [command.name, ...(command.aliases ?? [])]);
}

export interface SlashCommand {
  name: string;
  args: string;
}

/** A slash command in a submitted prompt: name (lower-cased) and arguments. "/usr/bin is broken" stays a message. */
export function parseSlash(text: string): SlashCommand | undefined {
  // A custom command's name may start with a digit (2fa.md is /2fa).
  const match = /^\/([a-zA-Z0-9][\w-]*)(?:\s+([\s\S]*))?$/.exec(text.trim());
  if (!match) return undefined;
  return { name: (match[1] ?? "").toLowerCase(), args: (match[2] ?? "").trim() };
}

/** The entry a typed name (already lower-cased, without its slash) stands for: by name or alias. */
export function findSlashCommand<C extends SlashCommandInfo>(catalog: readonly C[], name: string): C | undefined {
  return catalog.find((command) => command.name === name) ?? catalog.find((command) => command.aliases?.includes(name) === true);
}

/** /help: every command of the catalogue, then the keys. */
export function helpOutput(catalog: readonly SlashCommandInfo[]): CommandOutput {
  const width = Math.max(0, ...catalog.map((command) => command.usage.length)) + 1;
  const line = (command: SlashCommandInfo): string => {
    const aliases = command.aliases && command.aliases.length > 0 ? ` · also ${command.aliases.map((alias) => `/${alias}`).join(", ")}` : "";
    return `${command.usage.padEnd(width)} ${command.description}${aliases}`;
  };
  return { title: "Commands", lines: [...catalog.map(line), "", "Keys", ...KEY_HELP] };
}

/** What any front end or the core answers to a name that is not in the catalogue. */
export function unknownCommandOutput(name: string): CommandOutput {
  return { title: `Unknown command /${name}`, lines: ["Type /help for the list of commands."], isError: true };
}
