/**
 * The human-owned instruction files, read every turn, most general first (ADR 0079):
 *
 *   1. the user's own AGENTS.md ($XDG_CONFIG_HOME/valarmind/AGENTS.md);
 *   2. AGENTS.md in each directory from the workspace root down to the current directory, or
 *      CLAUDE.md where a directory has no AGENTS.md (as Codex, Claude Code, Gemini CLI and OpenCode
 *      read them);
 *   3. VALARMIND.md (shared) and VALARMIND.local.md (personal), valarmind's own: last, so they win.
 *
 * The repository's files pass the same confinement as read_file (docs/security.md): no symlink
 * leaving the workspace, no FIFO, socket or device, no file with several hard links, a size cap,
 * no binary content. A refused file is left out of the prompt and reported (a notice and a
 * manifest entry), never read. The user's own file is theirs: it may be a symlink (dotfile
 * managers), but it must be a regular text file under the cap. A file identical to an earlier one
 * is sent once. With `contextFiles: false` (`--no-context-files`) none is read: only the core
 * rules instruct.
 */
import { constants, realpathSync } from "node:fs";
import { open, stat } from "node:fs/promises";
import { homeDir } from "../config/home-dir.ts";
import { basename, isAbsolute, join, relative, resolve, sep } from "node:path";
import type { WorkspacePaths } from "../config/paths.ts";
import { userConfigDir } from "../config/user-config-dir.ts";
import { describeError, ValarmindError } from "../errors.ts";
import { confinePath, PathEscapeError } from "../tools/confine.ts";
import { readConfined } from "../tools/confined-file.ts";
import { errnoCode } from "../errors.ts";
import { asUtf8, looksBinary } from "../tools/read-file.ts";
import type { InstructionFile } from "./section.ts";
import { agentsItemId, USER_INSTRUCTIONS_ID } from "./sections/instructions.ts";

/** Instruction files larger than this are refused (Codex caps AGENTS.md at 32 KiB). */
export const INSTRUCTION_FILE_MAX_BYTES = 64 * 1024;

/** The names read in each directory from the workspace root down, the first that exists. */
export const AGENTS_FILE_NAMES = ["AGENTS.md", "CLAUDE.md"] as const;

export interface RefusedInstructionFile {
  /** The manifest item it would have been ("project_instructions", "agents:src/AGENTS.md"). */
  id: string;
  path: string;
  reason: string;
}

/** A file left out because an earlier one has the same text. */
export interface DuplicateInstructionFile {
  id: string;
  path: string;
  /** The path of the earlier file that is sent. */
  of: string;
}

export interface InstructionFiles {
  /** The user's own AGENTS.md. */
  userInstructions?: InstructionFile;
  /** The repository's AGENTS.md / CLAUDE.md files, root first. */
  agentsInstructions: InstructionFile[];
  project?: InstructionFile;
  personal?: InstructionFile;
  refused: RefusedInstructionFile[];
  duplicates: DuplicateInstructionFile[];
}

export interface InstructionFileOptions {
  /** Where the run started: AGENTS.md files are read from the workspace root down to it (default: the process's). */
  cwd?: string;
  /** The user's config directory (default: user-config-dir.ts). */
  userDir?: string;
  /** False (`--no-context-files`): no instruction file is read. */
  contextFiles?: boolean;
}

type Outcome = { file: InstructionFile } | { refused: string } | undefined;

async function readInstructionFile(rootReal: string, name: string): Promise<Outcome> {
  let abs: string;
  try {
    abs = confinePath(rootReal, name).abs;
  } catch (error) {
    if (error instanceof PathEscapeError) return { refused: error.message };
    throw error;
  }
  const read = await readConfined(abs, name, INSTRUCTION_FILE_MAX_BYTES);
  if (!read.ok) {
    if (read.reason === "missing") return undefined;
    return { refused: read.reason === "too_large" ? `${read.problem} for instruction files; shorten it` : read.problem };
  }
  if (read.links > 1) return { refused: `${name} has ${read.links} hard links: another name for it may be outside the workspace` };
  const bytes = asUtf8(read.bytes);
  if (looksBinary(bytes)) return { refused: `${name} is a binary file` };
  const text = bytes.toString("utf8");
  const hidden = text.match(HIDDEN_CHARACTERS)?.length ?? 0;
  if (hidden > 0) {
    return {
      refused: `${name} holds ${hidden} invisible character(s) (Unicode tag characters or bidi controls) that the model would read and you would not see; remove them (grep -nP '[\\x{E0000}-\\x{E007F}\\x{202A}-\\x{202E}\\x{2066}-\\x{2069}]' ${name} finds them)`,
    };
  }
  // Zero-width spaces carry no meaning but can split a tag so that escapeOwnTags misses it.
  return { file: { path: name, text: text.replace(ZERO_WIDTH, "") } };
}

/**
 * Characters a repository's instruction file may hold that no editor, pager or diff shows, but a
 * model reads: Unicode tag characters (ASCII smuggled as U+E0000–U+E007F) and bidi embeddings,
 * overrides and isolates (text sent differently than it reads). Such a file is refused, told.
 */
const HIDDEN_CHARACTERS = /[\u{E0000}-\u{E007F}\u202A-\u202E\u2066-\u2069]/gu;
/** Zero-width space, word joiner and invisible operators, and a byte-order mark inside the text. */
const ZERO_WIDTH = /[\u200B\u2060-\u2064\uFEFF]/g;

/** `~/.config/valarmind/AGENTS.md`: the user's path as they would write it (also stable across machines' user names). */
function shownUserPath(abs: string): string {
  const home = homeDir();
  return home !== undefined && (abs === home || abs.startsWith(home + sep)) ? `~${abs.slice(home.length)}` : abs;
}

/** The user's own AGENTS.md: followed through symlinks (it is theirs), but a regular text file under the cap. */
async function readUserFile(abs: string): Promise<Outcome> {
  const shown = shownUserPath(abs);
  let size: number;
  try {
    const info = await stat(abs);
    if (!info.isFile()) return { refused: `${shown} is not a regular file` };
    size = info.size;
  } catch (error) {
    const code = errnoCode(error);
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    return { refused: `${shown} cannot be read: ${describeError(error)}` };
  }
  if (size > INSTRUCTION_FILE_MAX_BYTES) return { refused: `${shown} is ${size} bytes, over the cap of ${INSTRUCTION_FILE_MAX_BYTES} for instruction files; shorten it` };
  let bytes: Buffer;
  try {
    const handle = await open(abs, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      bytes = await handle.readFile();
    } finally {
      await handle.close();
    }
  } catch (error) {
    return { refused: `${shown} cannot be read: ${describeError(error)}` };
  }
  if (bytes.length > INSTRUCTION_FILE_MAX_BYTES) return { refused: `${shown} grew over the cap of ${INSTRUCTION_FILE_MAX_BYTES} bytes while it was read` };
  if (looksBinary(bytes)) return { refused: `${shown} is a binary file` };
  return { file: { path: shown, text: bytes.toString("utf8") } };
}

/** The directories from the workspace root ("") down to `cwd`, as workspace-relative paths. */
export function directoriesDown(rootReal: string, cwd: string): string[] {
  let cwdReal: string;
  try {
    cwdReal = realpathSync(cwd);
  } catch {
    cwdReal = resolve(cwd);
  }
  const rel = relative(rootReal, cwdReal);
  if (rel === "" || rel.startsWith("..") || isAbsolute(rel)) return [""];
  const parts = rel.split(sep);
  return ["", ...parts.map((_, i) => parts.slice(0, i + 1).join("/"))];
}

/** In one directory: AGENTS.md, else CLAUDE.md. An AGENTS.md that is refused still counts as the directory's file. */
async function readAgentsFile(rootReal: string, dir: string): Promise<{ name: string; outcome: Outcome } | undefined> {
  for (const fileName of AGENTS_FILE_NAMES) {
    const name = dir === "" ? fileName : `${dir}/${fileName}`;
    const outcome = await readInstructionFile(rootReal, name);
    if (outcome !== undefined) return { name, outcome };
  }
  return undefined;
}

export async function readInstructionFiles(paths: WorkspacePaths, options: InstructionFileOptions = {}): Promise<InstructionFiles> {
  const result: InstructionFiles = { agentsInstructions: [], refused: [], duplicates: [] };
  if (options.contextFiles === false) return result;
  let rootReal: string;
  try {
    rootReal = realpathSync(paths.root);
  } catch (error) {
    throw new ValarmindError(`cannot open the workspace ${paths.root}: ${describeError(error)}`);
  }
  const [user, agents, project, personal] = await Promise.all([
    readUserFile(join(options.userDir ?? userConfigDir(), "AGENTS.md")),
    Promise.all(directoriesDown(rootReal, options.cwd ?? process.cwd()).map((dir) => readAgentsFile(rootReal, dir))),
    readInstructionFile(rootReal, basename(paths.instructions)),
    readInstructionFile(rootReal, basename(paths.localInstructions)),
  ]);

  // In the order they are sent; a text already sent is not sent again.
  const sent = new Map<string, string>();
  const take = (id: string, path: string, outcome: Outcome, keep: (file: InstructionFile) => void): void => {
    if (outcome === undefined) return;
    if ("refused" in outcome) {
      result.refused.push({ id, path, reason: outcome.refused });
      return;
    }
    const key = outcome.file.text.trim();
    const earlier = sent.get(key);
    if (earlier !== undefined && key !== "") {
      result.duplicates.push({ id, path, of: earlier });
      return;
    }
    sent.set(key, path);
    keep(outcome.file);
  };
  const userPath = shownUserPath(join(options.userDir ?? userConfigDir(), "AGENTS.md"));
  take(USER_INSTRUCTIONS_ID, userPath, user, (file) => (result.userInstructions = file));
  for (const found of agents) {
    if (found) take(agentsItemId(found.name), found.name, found.outcome, (file) => result.agentsInstructions.push(file));
  }
  take("project_instructions", basename(paths.instructions), project, (file) => (result.project = file));
  take("personal_preferences", basename(paths.localInstructions), personal, (file) => (result.personal = file));
  return result;
}

/** The notice for a refused file: what was left out, why, and what to do. */
export function refusedInstructionNotice(refused: RefusedInstructionFile): string {
  const where = refused.id === USER_INSTRUCTIONS_ID ? "a regular text file" : "a regular text file inside the workspace";
  return `${refused.path} was not read and is not in the prompt: ${refused.reason}. Replace it with ${where} to use it.`;
}
