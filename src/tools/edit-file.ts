/** edit_file: exact old→new replacement; the match must be unique unless replace_all is set. */
import { relative } from "node:path";
import { toolText } from "./descriptions.ts";
import { hardLinkWarning } from "./confined-file.ts";
import { applyPlannedText, currentText, toolError } from "./file-change.ts";
import { sensitiveWriteReason } from "./sensitive-paths.ts";
import { fileDiff } from "./file-diff.ts";
import { endingsOf, lfView, usualEnding, withEndings } from "./line-endings.ts";
import { Type, type Static } from "@sinclair/typebox";
import { defineTool, Nullable } from "./define-tool.ts";
import { applyPreparation, type Preparation, type Tool, type ToolResult } from "./types.ts";

const EditFileParams = Type.Object(
  {
    path: Type.String({ minLength: 1, description: "workspace-relative" }),
    old_string: Type.String(),
    new_string: Type.String(),
    replace_all: Type.Optional(Nullable(Type.Boolean())),
  },
  { additionalProperties: false },
);

export type EditFileArgs = Static<typeof EditFileParams>;

const MAX_LISTED_LINES = 10;

/** Start offsets of the non-overlapping occurrences of `needle`. */
function occurrences(haystack: string, needle: string): number[] {
  const found: number[] = [];
  let at = haystack.indexOf(needle);
  while (at >= 0) {
    found.push(at);
    at = haystack.indexOf(needle, at + needle.length);
  }
  return found;
}

function lineOf(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

/** A hint for a failed match: the first line where old_string's first line appears ignoring whitespace. */
function nearMiss(text: string, oldString: string): string {
  const first = oldString.split("\n").find((l) => l.trim() !== "")?.trim();
  if (first === undefined) return "";
  const lines = text.split("\n");
  const index = lines.findIndex((l) => l.trim() === first);
  return index >= 0 ? ` Its first line appears at line ${index + 1} with different indentation or surrounding text; read the file and copy the text exactly.` : "";
}

function fail(forModel: string, summary: string): Preparation {
  return { ready: false, result: toolError(forModel, summary) };
}

export function createEditFileTool(): Tool {
  async function prepare(args: EditFileArgs, root: string): Promise<Preparation> {
    const rel = relative(root, args.path);
    if (args.old_string === "") return fail("old_string is empty. To create a file or replace all of it, use write_file.", `${rel}: empty old_string`);
    if (args.old_string === args.new_string) return fail("old_string and new_string are identical; there is nothing to change.", `${rel}: no change`);
    const current = await currentText(args.path, rel);
    if (!current.exists) return fail(`${rel} does not exist. Use write_file to create it.`, `${rel}: not found`);
    if ("denied" in current) return fail(`${current.denied}.`, `${rel}: permission denied`);
    if ("problem" in current) return fail(`${current.problem}; edit_file only edits text files.`, `${rel}: cannot edit`);
    const before = current.text;
    // Matched in the file's LF view (read_file shows "\r\n" as "\n"); what replaces a match keeps
    // the endings its lines had, and lines it adds take the file's usual one (line-endings.ts).
    const view = lfView(before);
    const oldString = args.old_string.replaceAll("\r\n", "\n");
    const newString = args.new_string.replaceAll("\r\n", "\n");
    if (oldString === newString) return fail("old_string and new_string differ only in line endings; the file keeps its own, so there is nothing to change.", `${rel}: no change`);
    const at = occurrences(view.text, oldString);
    if (at.length === 0) {
      return fail(`old_string was not found in ${rel} (0 matches); nothing was changed.${nearMiss(view.text, oldString)}`, `${rel}: old_string not found`);
    }
    if (at.length > 1 && !args.replace_all) {
      const lines = at.slice(0, MAX_LISTED_LINES).map((o) => lineOf(view.text, o));
      const more = at.length > MAX_LISTED_LINES ? ", …" : "";
      return fail(
        `old_string matches ${at.length} times in ${rel} (at lines ${lines.join(", ")}${more}); nothing was changed. Include more surrounding lines to make it unique, or set replace_all: true to change every occurrence.`,
        `${rel}: old_string matches ${at.length} times`,
      );
    }
    const usual = usualEnding(before);
    let after = "";
    let done = 0;
    for (const start of args.replace_all ? at : at.slice(0, 1)) {
      const from = view.original(start);
      const to = view.original(start + oldString.length);
      after += before.slice(done, from) + withEndings(newString, endingsOf(before.slice(from, to)), usual);
      done = to;
    }
    after += before.slice(done);
    const diff = await fileDiff(rel, before, after);
    const count = args.replace_all ? at.length : 1;
    const escalate = hardLinkWarning(rel, current.links) ?? sensitiveWriteReason(rel, root);
    return {
      ready: true,
      kind: "write",
      description: `edit ${rel}${count > 1 ? ` (${count} replacements)` : ""}`,
      diff: diff.text,
      ...(escalate !== undefined ? { escalate } : {}),
      async apply(): Promise<ToolResult> {
        const failed = await applyPlannedText(root, rel, before, after, current.links);
        if (failed) return failed;
        const where = at.slice(0, MAX_LISTED_LINES).map((o) => lineOf(view.text, o)).join(", ");
        return {
          forModel: `Edited ${rel}: ${count} replacement${count > 1 ? "s" : ""} at line${count > 1 ? "s" : ""} ${where} (+${diff.added} −${diff.removed} lines).`,
          summary: `edited ${rel} (+${diff.added} −${diff.removed})`,
          diff: diff.text,
          isError: false,
        };
      },
    };
  }

  return defineTool({
    name: "edit_file",
    description: toolText("edit_file"),
    kind: "write",
    parameters: EditFileParams,
    pathArgs: ["path"],
    describe: (args) => `edit ${args.path}`,
    prepare: (args, ctx) => prepare(args, ctx.root),
    execute: (args, ctx) => applyPreparation(prepare(args, ctx.root)),
  });
}
