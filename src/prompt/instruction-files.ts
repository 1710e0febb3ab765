/** The human-owned instruction files, read every turn: VALARMIND.md (shared) and VALARMIND.local.md (personal). */
import { readFile } from "node:fs/promises";
import { relative } from "node:path";
import type { WorkspacePaths } from "../config/paths.ts";
import { ValarmindError } from "../errors.ts";
import type { InstructionFile } from "./section.ts";

async function readOptional(root: string, file: string): Promise<InstructionFile | undefined> {
  try {
    return { path: relative(root, file) || file, text: await readFile(file, "utf8") };
  } catch (error) {
    if (error instanceof Error && "code" in error && error.code === "ENOENT") return undefined;
    throw new ValarmindError(`cannot read ${file}: ${error instanceof Error ? error.message : String(error)}`, {
      hint: "Check the file's permissions, or move it aside to run without it.",
    });
  }
}

export async function readInstructionFiles(paths: WorkspacePaths): Promise<{ project?: InstructionFile; personal?: InstructionFile }> {
  const [project, personal] = await Promise.all([readOptional(paths.root, paths.instructions), readOptional(paths.root, paths.localInstructions)]);
  return { ...(project && { project }), ...(personal && { personal }) };
}
