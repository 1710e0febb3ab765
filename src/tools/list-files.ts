/** list_files: files under a directory, .gitignore-aware, optionally filtered by a glob, capped. */
import { stat } from "node:fs/promises";
import { basename, relative } from "node:path";
import { toolText } from "./descriptions.ts";
import { fileAccessProblem } from "./file-access-problem.ts";
import { walkFiles } from "./file-walk.ts";
import { Type, type Static } from "@sinclair/typebox";
import { defineTool, Nullable } from "./define-tool.ts";
import type { Tool } from "./types.ts";

/** A name as one unambiguous token: quoted (JSON) when it holds a control character such as a newline. */
export function shownName(name: string): string {
  return /[\u0000-\u001f\u007f]/.test(name) ? JSON.stringify(name) : name;
}

export const LIST_FILES_DEFAULT_CAP = 500;
export const LIST_FILES_MAX_CAP = 5000;

const ListFilesParams = Type.Object(
  {
    path: Type.Optional(Nullable(Type.String({ description: "directory; null for the workspace root" }))),
    glob: Type.Optional(Nullable(Type.String())),
    max_results: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: LIST_FILES_MAX_CAP, description: `default ${LIST_FILES_DEFAULT_CAP}` }))),
  },
  { additionalProperties: false },
);

export type ListFilesArgs = Static<typeof ListFilesParams>;

/** A glob without "/" matches file names at any depth (like `find -name`); one with "/" matches the path. */
export function globMatcher(pattern: string | undefined): (relToBase: string) => boolean {
  if (pattern === undefined || pattern === "") return () => true;
  const glob = new Bun.Glob(pattern);
  return pattern.includes("/") ? (p) => glob.match(p) : (p) => glob.match(basename(p));
}

export function createListFilesTool(): Tool {
  return defineTool({
    name: "list_files",
    description: toolText("list_files"),
    kind: "read",
    parameters: ListFilesParams,
    pathArgs: ["path"],
    workingSetPriority: 0.3,
    describe: (args) => `list ${args.path ?? "."}${args.glob ? ` ${args.glob}` : ""}`,
    async execute(args, ctx) {
      const dir = args.path ?? ctx.root;
      const shown = relative(ctx.root, dir) || ".";
      let info;
      try {
        info = await stat(dir);
      } catch (error) {
        const problem = fileAccessProblem(error, shown);
        if (!problem) throw error;
        const summary = problem.kind === "missing" ? `${shown}: not found` : `${shown}: permission denied`;
        return { forModel: `Error: ${problem.message}.`, summary, isError: true };
      }
      if (!info.isDirectory()) {
        return { forModel: `${shown} is a file, not a directory.`, summary: `${shown}: a file`, isError: false };
      }
      const cap = args.max_results ?? LIST_FILES_DEFAULT_CAP;
      const matches = globMatcher(args.glob);
      const listed: string[] = [];
      const unreadable: string[] = [];
      let total = 0;
      for await (const entry of walkFiles(ctx.root, dir, ctx.signal, unreadable)) {
        if (!matches(relative(dir, entry.abs).split("\\").join("/"))) continue;
        total++;
        // A name with a newline would read as two files: quoted, it is one.
        if (listed.length < cap) listed.push(entry.isSymlink ? `${shownName(entry.rel)} (symlink)` : shownName(entry.rel));
      }
      const skippedNote = unreadable.length > 0 ? `\n(skipped what could not be read, permission denied: ${unreadable.slice(0, 5).map(shownName).join(", ")}${unreadable.length > 5 ? ", …" : ""})` : "";
      if (ctx.signal.aborted) return { forModel: "Aborted.", summary: `list ${shown}: aborted`, isError: true };
      const what = `${args.glob ? `matching ${args.glob} ` : ""}under ${shown}`;
      if (total === 0) return { forModel: `No files ${what} (ignored paths are skipped).${skippedNote}`, summary: `list ${shown}: 0 files`, isError: false };
      const footer = (total > cap ? `\n(${total} files ${what}; showing the first ${cap} — narrow with path or glob)` : "") + skippedNote;
      return { forModel: listed.join("\n") + footer, summary: `list ${shown}: ${total} files`, isError: false };
    },
  });
}
