/**
 * Custom commands: a Markdown file `NAME.md` in the user's or a trusted project's commands
 * directory is the slash command `/NAME [ARGS]`, whose text (after an optional front matter with
 * `description:`) is sent as the user's message with `$ARGUMENTS` replaced by ARGS — as Claude
 * Code's and Gemini CLI's custom commands do (ADR 0082). Pure: parsing, names and expansion; the
 * files are read by custom-command-files.ts.
 */
import { oneLine } from "../one-line.ts";
import { parseSlash } from "./slash-catalog.ts";

export type CustomCommandScope = "user" | "project";

export interface CustomCommand {
  name: string;
  /** One line for /help and completion: the front matter's `description:`, else the text's first line. */
  description: string;
  /** The prompt text, front matter removed. */
  body: string;
  scope: CustomCommandScope;
  /** The file it was read from, as notices name it. */
  file: string;
}

export interface CustomCommandSet {
  commands: CustomCommand[];
  /** One line each: a file that was refused and why, or the project commands an untrusted folder ignored. */
  notices: string[];
  /** Names of project commands left out because the folder is not trusted. */
  untrusted: string[];
  /** Command files that were refused, by the name they would have had, with why (a call of one is an error, not text for the model). */
  refused?: Array<{ name: string; why: string }>;
}

export const NO_CUSTOM_COMMANDS: CustomCommandSet = { commands: [], notices: [], untrusted: [] };

/** The largest command file read: a prompt, not a document. */
export const CUSTOM_COMMAND_MAX_BYTES = 32 * 1024;
/** A letter or digit first (parseSlash reads "/-x" as no command). */
export const CUSTOM_COMMAND_NAME = /^[a-z0-9][a-z0-9-]*$/;
export const ARGUMENTS_PLACEHOLDER = "$ARGUMENTS";
const DESCRIPTION_MAX = 80;

export type ParsedCommandFile = { ok: true; description: string; body: string } | { ok: false; problem: string };

function unquote(value: string): string {
  const trimmed = value.trim();
  const quoted = /^(["'])(.*)\1$/.exec(trimmed);
  return quoted ? (quoted[2] ?? "") : trimmed;
}

const descriptionLine = (text: string) => oneLine(text, DESCRIPTION_MAX);

/**
 * A command file's text: an optional front matter between `---` lines whose `description:` is
 * read (other keys, such as Claude Code's `allowed-tools`, are ignored), then the prompt.
 */
export function parseCommandFile(text: string): ParsedCommandFile {
  const lines = text.replace(/^\uFEFF/, "").replace(/\r\n?/g, "\n").split("\n");
  let description: string | undefined;
  let start = 0;
  if (lines[0]?.trim() === "---") {
    const end = lines.findIndex((line, i) => i > 0 && line.trim() === "---");
    if (end < 0) return { ok: false, problem: "its front matter opens with --- but is never closed; end it with a line of ---" };
    for (const line of lines.slice(1, end)) {
      const field = /^([A-Za-z][\w-]*)\s*:(.*)$/.exec(line);
      if (field && field[1] === "description") description = unquote(field[2] ?? "");
    }
    start = end + 1;
  }
  const body = lines.slice(start).join("\n").replace(/^\s*\n/, "").trimEnd();
  if (body.trim() === "") return { ok: false, problem: "has no prompt text; write the prompt below the front matter" };
  const firstLine = body.split("\n").find((line) => line.trim() !== "") ?? "";
  return { ok: true, description: descriptionLine(description && description !== "" ? description : firstLine.replace(/^#+\s*/, "")), body };
}

/** What the model receives for `/NAME ARGS`: `$ARGUMENTS` replaced, else ARGS after the text. */
export function expandCustomCommand(command: Pick<CustomCommand, "body">, args: string): string {
  // A function, so that `$&` or `$1` in the arguments stay as typed.
  if (command.body.includes(ARGUMENTS_PLACEHOLDER)) return command.body.replaceAll(ARGUMENTS_PLACEHOLDER, () => args);
  return args === "" ? command.body : `${command.body}\n\n${args}`;
}

/** The custom command a submitted text calls ("/review src/a.ts"), if any, and the text it stands for. */
export function customCommandCall(text: string, commands: readonly CustomCommand[]): { command: CustomCommand; message: string } | undefined {
  const slash = parseSlash(text);
  const command = slash ? commands.find((candidate) => candidate.name === slash.name) : undefined;
  return command && slash ? { command, message: expandCustomCommand(command, slash.args) } : undefined;
}

/** Project commands replace the user's of the same name (the trusted project's layer comes after the user's, as in settings); sorted by name. */
export function mergeCustomCommands(user: readonly CustomCommand[], project: readonly CustomCommand[]): CustomCommand[] {
  const byName = new Map<string, CustomCommand>();
  for (const command of [...user, ...project]) byName.set(command.name, command);
  return [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
