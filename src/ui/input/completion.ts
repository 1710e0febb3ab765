/** Where a completion applies in the buffer and how accepting one rewrites it. Pure. */
import type { SlashCommandInfo } from "../../agent/front-end-contract.ts";
import type { EditorBuffer } from "./editor-buffer.ts";

export type CompletionContext =
  | { kind: "command"; query: string; start: number; end: number }
  | { kind: "path"; query: string; start: number; end: number };

export interface CompletionItem {
  /** Text inserted in place of the query (without the leading "/" or "@"). */
  value: string;
  label: string;
  detail?: string;
}

/**
 * A "/" at the very start of the prompt completes a command name; an "@" starting the word under
 * the cursor completes a workspace path.
 */
export function completionContext(buffer: EditorBuffer): CompletionContext | undefined {
  const { text, cursor } = buffer;
  const before = text.slice(0, cursor);
  const command = /^\/([\w-]*)$/.exec(before);
  if (command) return { kind: "command", query: command[1] ?? "", start: 1, end: wordEnd(text, cursor) };
  const path = /(?:^|\s)@([^\s@]*)$/.exec(before);
  if (path) {
    const query = path[1] ?? "";
    return { kind: "path", query, start: cursor - query.length, end: wordEnd(text, cursor) };
  }
  return undefined;
}

function wordEnd(text: string, cursor: number): number {
  const match = /^\S*/.exec(text.slice(cursor));
  return cursor + (match ? match[0].length : 0);
}

/** Replaces the query by the chosen value; a directory keeps the cursor in the word to go on. */
export function applyCompletion(buffer: EditorBuffer, context: CompletionContext, value: string): EditorBuffer {
  const keepGoing = context.kind === "path" && value.endsWith("/");
  const inserted = keepGoing ? value : `${value} `;
  const rest = buffer.text.slice(context.end);
  const after = keepGoing ? rest : rest.replace(/^ /, "");
  const text = buffer.text.slice(0, context.start) + inserted + after;
  return { text, cursor: context.start + inserted.length };
}

/** The catalogue's commands whose name starts with the query, in catalogue order. */
export function filterCommands(commands: readonly SlashCommandInfo[], query: string): CompletionItem[] {
  const q = query.toLowerCase();
  return commands
    .filter((command) => command.name.toLowerCase().startsWith(q))
    .map((command) => ({ value: command.name, label: command.usage, detail: command.description }));
}
