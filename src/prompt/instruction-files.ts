/**
 * The human-owned instruction files, read every turn: VALARMIND.md (shared) and
 * VALARMIND.local.md (personal). They come with the repository, so they pass the same
 * confinement as read_file (docs/security.md): no symlink leaving the workspace, no FIFO, socket
 * or device, no file with several hard links, a size cap, no binary content. A refused file is
 * left out of the prompt and reported (a notice and a manifest entry), never read.
 */
import { realpathSync } from "node:fs";
import { basename } from "node:path";
import type { WorkspacePaths } from "../config/paths.ts";
import { describeError, ValarmindError } from "../errors.ts";
import { confinePath, PathEscapeError } from "../tools/confine.ts";
import { readConfined } from "../tools/confined-file.ts";
import { looksBinary } from "../tools/read-file.ts";
import type { InstructionFile } from "./section.ts";

/** Instruction files larger than this are refused (Codex caps AGENTS.md at 32 KiB). */
export const INSTRUCTION_FILE_MAX_BYTES = 64 * 1024;

export interface RefusedInstructionFile {
  /** The manifest item it would have been ("project_instructions"). */
  id: "project_instructions" | "personal_preferences";
  path: string;
  reason: string;
}

export interface InstructionFiles {
  project?: InstructionFile;
  personal?: InstructionFile;
  refused: RefusedInstructionFile[];
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
  if (looksBinary(read.bytes)) return { refused: `${name} is a binary file` };
  return { file: { path: name, text: read.bytes.toString("utf8") } };
}

export async function readInstructionFiles(paths: WorkspacePaths): Promise<InstructionFiles> {
  let rootReal: string;
  try {
    rootReal = realpathSync(paths.root);
  } catch (error) {
    throw new ValarmindError(`cannot open the workspace ${paths.root}: ${describeError(error)}`);
  }
  const entries = [
    { id: "project_instructions", key: "project", name: basename(paths.instructions) },
    { id: "personal_preferences", key: "personal", name: basename(paths.localInstructions) },
  ] as const;
  const result: InstructionFiles = { refused: [] };
  const outcomes = await Promise.all(entries.map((e) => readInstructionFile(rootReal, e.name)));
  entries.forEach((entry, i) => {
    const outcome = outcomes[i];
    if (outcome === undefined) return;
    if ("file" in outcome) result[entry.key] = outcome.file;
    else result.refused.push({ id: entry.id, path: entry.name, reason: outcome.refused });
  });
  return result;
}

/** The notice for a refused file: what was left out, why, and what to do. */
export function refusedInstructionNotice(refused: RefusedInstructionFile): string {
  return `${refused.path} was not read and is not in the prompt: ${refused.reason}. Replace it with a regular text file inside the workspace to use it.`;
}
