/**
 * Reads the custom commands: `NAME.md` files in the user's `$XDG_CONFIG_HOME/valarmind/commands/`
 * and, only in a trusted folder, the project's `.valarmind/commands/`. A cloned repository must
 * not put prompts behind the user's slash commands unasked, so an untrusted folder's commands are
 * left out with one notice; a project file whose real path is outside the workspace is refused.
 * Every refused file is a notice naming it; nothing here throws for a bad file.
 */
import { readdir, readFile, realpath, stat } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import { describeError } from "../errors.ts";
import { userConfigDir } from "../config/user-config-dir.ts";
import {
  CUSTOM_COMMAND_MAX_BYTES,
  CUSTOM_COMMAND_NAME,
  mergeCustomCommands,
  parseCommandFile,
  type CustomCommand,
  type CustomCommandScope,
  type CustomCommandSet,
} from "./custom-commands.ts";

export interface CustomCommandSources {
  /** The workspace root: the project's commands are in `.valarmind/commands/` under it. */
  root: string;
  /** Whether the folder is trusted (a stored decision or --trust). */
  trusted: boolean;
  /** Names a custom command may not take (the built-in commands and their aliases). */
  reserved: readonly string[];
  /** The user's commands directory; defaults to `$XDG_CONFIG_HOME/valarmind/commands`. */
  userDir?: string;
}

export function userCommandsDir(): string {
  return join(userConfigDir(), "commands");
}

export function projectCommandsDir(root: string): string {
  return join(root, ".valarmind", "commands");
}

interface DirRead {
  commands: CustomCommand[];
  notices: string[];
  refused: Array<{ name: string; why: string }>;
}

/** The `.md` entries of `dir`, sorted; a missing directory has none. */
async function markdownEntries(dir: string): Promise<{ names: string[]; notice?: string }> {
  try {
    const entries = await readdir(dir);
    return { names: entries.filter((name) => name.toLowerCase().endsWith(".md")).sort() };
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === "ENOENT") return { names: [] };
    return { names: [], notice: `custom commands in ${dir} were not read: ${describeError(error)}` };
  }
}

async function readCommandFile(file: string, shown: string, scope: CustomCommandScope, root: string): Promise<CustomCommand | string> {
  const name = file.slice(file.lastIndexOf(sep) + 1).replace(/\.md$/i, "");
  if (!CUSTOM_COMMAND_NAME.test(name) || !file.endsWith(".md")) {
    return `${shown}: '${name}' is not a command name (lower-case letters, digits and '-', and a .md file); rename it, e.g. review-pr.md`;
  }
  try {
    // A link (or a linked commands directory) must not lead the prompt out of the repository.
    if (scope === "project") {
      const target = await realpath(file);
      const realRoot = await realpath(root);
      if (target !== realRoot && !target.startsWith(realRoot + sep)) return `${shown}: a link to ${target}, outside the workspace; a project command must be a file in the repository`;
    }
    const info = await stat(file);
    if (!info.isFile()) return `${shown}: not a regular file`;
    // Another name of a file with several hard links may be outside the workspace (~/.ssh/id_rsa).
    if (scope === "project" && info.nlink > 1) return `${shown}: has ${info.nlink} hard links, and another name for it may be outside the workspace; a project command must be a file of its own`;
    if (info.size > CUSTOM_COMMAND_MAX_BYTES) return `${shown}: ${Math.ceil(info.size / 1024)} KiB, over the ${CUSTOM_COMMAND_MAX_BYTES / 1024} KiB a command file may hold; shorten it`;
    let text: string;
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(await readFile(file));
    } catch {
      return `${shown}: not UTF-8 text`;
    }
    const parsed = parseCommandFile(text);
    if (!parsed.ok) return `${shown}: ${parsed.problem}`;
    return { name, description: parsed.description, body: parsed.body, scope, file };
  } catch (error) {
    return `${shown}: could not be read (${describeError(error)})`;
  }
}

async function readCommandsDir(dir: string, scope: CustomCommandScope, root: string, reserved: readonly string[]): Promise<DirRead> {
  const listed = await markdownEntries(dir);
  const read: DirRead = { commands: [], notices: listed.notice ? [listed.notice] : [], refused: [] };
  for (const entry of listed.names) {
    const file = join(dir, entry);
    const shown = scope === "project" ? relative(root, file) : file;
    const command = await readCommandFile(file, shown, scope, root);
    if (typeof command === "string") {
      read.notices.push(`custom command ${command}`);
      read.refused.push({ name: entry.replace(/\.md$/i, "").toLowerCase(), why: command });
    }
    else if (reserved.includes(command.name)) read.notices.push(`custom command ${shown}: /${command.name} is a built-in command, which a custom command cannot replace; rename the file`);
    else read.commands.push(command);
  }
  return read;
}

/** The user's commands, then (trusted folder only) the project's, which replace a user command of the same name. */
export async function loadCustomCommands(sources: CustomCommandSources): Promise<CustomCommandSet> {
  const user = await readCommandsDir(sources.userDir ?? userCommandsDir(), "user", sources.root, sources.reserved);
  const projectDir = projectCommandsDir(sources.root);
  if (!sources.trusted) {
    const listed = await markdownEntries(projectDir);
    const names = listed.names.map((entry) => entry.replace(/\.md$/i, ""));
    // Only names a command can have are shown: a file name is the clone's text (a newline in it
    // would print a line in valarmind's voice); the others are counted.
    const untrusted = names.filter((name) => CUSTOM_COMMAND_NAME.test(name));
    const odd = names.length - untrusted.length;
    const notices = [...user.notices];
    if (names.length > 0) {
      const shown = [...untrusted.map((name) => `/${name}`), ...(odd > 0 ? [`${odd} file(s) with names no command can have`] : [])].join(", ");
      notices.push(
        `ignoring ${names.length} project command(s) in ${relative(sources.root, projectDir)} (${shown}): this folder is not trusted. ` +
          "If you trust this repository, run 'valarmind trust', or pass --trust for one run.",
      );
    }
    return { commands: mergeCustomCommands(user.commands, []), notices, untrusted, refused: user.refused };
  }
  const project = await readCommandsDir(projectDir, "project", sources.root, sources.reserved);
  return { commands: mergeCustomCommands(user.commands, project.commands), notices: [...user.notices, ...project.notices], untrusted: [], refused: [...user.refused, ...project.refused] };
}
