/** grep: regex (or literal) search over workspace files; ripgrep when on PATH, else a JS fallback. */
import { stat } from "node:fs/promises";
import { join, relative } from "node:path";
import { linkCount, specialFileKind } from "./confined-file.ts";
import { toolText } from "./descriptions.ts";
import { fileAccessProblem, permissionProblem } from "./file-access-problem.ts";
import { GREP_MAX_FILE_BYTES, GrepPatternError, searchWithJs, searchWithRipgrep, type GrepMatch, type GrepQuery, type GrepSkips } from "./grep-search.ts";
import { sliceWhole } from "../slice-whole.ts";
import { globMatcher, shownName } from "./list-files.ts";
import { Type, type Static } from "@sinclair/typebox";
import { defineTool, Nullable } from "./define-tool.ts";
import type { Tool, ToolResult } from "./types.ts";

export interface GrepToolOptions {
  /** Use the JS search even when ripgrep is installed (tests, or a broken rg). */
  forceFallback?: boolean;
  /** Path of the rg binary; defaults to `Bun.which("rg")`. */
  rgPath?: string;
}

export const GREP_DEFAULT_CAP = 100;
export const GREP_MAX_CAP = 1000;
const MAX_LINE_CHARS = 300;

const GrepParams = Type.Object(
  {
    pattern: Type.String({ minLength: 1 }),
    path: Type.Optional(Nullable(Type.String({ description: "file or directory; null for the workspace root" }))),
    glob: Type.Optional(Nullable(Type.String())),
    case_insensitive: Type.Optional(Nullable(Type.Boolean())),
    literal: Type.Optional(Nullable(Type.Boolean({ description: "pattern is plain text" }))),
    max_results: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: GREP_MAX_CAP, description: `default ${GREP_DEFAULT_CAP}` }))),
  },
  { additionalProperties: false },
);

export type GrepArgs = Static<typeof GrepParams>;

const plural = (n: number, one: string, many: string): string => `${n} ${n === 1 ? one : many}`;

/** A matching line; a long one as the MAX_LINE_CHARS around where the match starts. */
export function formatMatch(match: GrepMatch): string {
  let text = match.text;
  if (text.length > MAX_LINE_CHARS) {
    const from = Math.max(0, Math.min((match.column ?? 0) - MAX_LINE_CHARS / 4, text.length - MAX_LINE_CHARS));
    const kept = sliceWhole(text.slice(from), MAX_LINE_CHARS);
    const after = text.length - from - kept.length;
    text = `${from > 0 ? `[… ${from} chars] ` : ""}${kept}${after > 0 ? ` [… ${after} chars; line cut]` : ""}`;
  }
  return `${shownName(match.rel)}:${match.line}: ${text}`;
}

/** What the search left out, as footer lines: never "No matches" of text it did not look at. */
function skippedNote(skips: GrepSkips): string {
  const list = (names: string[]) => `${names.slice(0, 5).map(shownName).join(", ")}${names.length > 5 ? ", …" : ""}`;
  const notes: string[] = [];
  if (skips.large.length > 0) notes.push(`(skipped ${plural(skips.large.length, "file", "files")} over ${GREP_MAX_FILE_BYTES / (1024 * 1024)} MB: ${list(skips.large)}; search ${skips.large.length === 1 ? "it" : "them"} with run_shell (rg or grep))`);
  if (skips.unreadable.length > 0) notes.push(`(skipped what could not be read, permission denied: ${list(skips.unreadable)})`);
  if (skips.undecided.length > 0) {
    notes.push(`(the pattern backtracks too much to decide ${plural(skips.undecided.length, "line", "lines")}, which may match: ${list(skips.undecided)}; simplify it (no nested quantifiers such as (a+)+) or search with run_shell)`);
  }
  return notes.map((note) => `\n${note}`).join("");
}

/**
 * A target grep does not search: not a directory or a regular file (a FIFO would block, a device
 * never end), or a file over GREP_MAX_FILE_BYTES without ripgrep.
 */
async function refusedTarget(target: string, shown: string, withRipgrep: boolean): Promise<ToolResult | undefined> {
  const info = await stat(target);
  const special = specialFileKind(info);
  if (special) return { forModel: `Error: ${shown} is ${special}, not a regular file; grep does not read it.`, summary: `grep ${shown}: refused (not a regular file)`, isError: true };
  if (!withRipgrep && info.isFile() && info.size > GREP_MAX_FILE_BYTES) {
    return { forModel: `Error: ${shown} is over ${GREP_MAX_FILE_BYTES / (1024 * 1024)} MB, too large for grep's built-in search (ripgrep is not installed); search it with run_shell (grep -n PATTERN ${shown}).`, summary: `grep ${shown}: too large`, isError: true };
  }
  return undefined;
}

export function createGrepTool(options: GrepToolOptions = {}): Tool {
  const rg = options.forceFallback ? undefined : (options.rgPath ?? Bun.which("rg") ?? undefined);
  return defineTool({
    name: "grep",
    description: toolText("grep"),
    kind: "read",
    parameters: GrepParams,
    pathArgs: ["path"],
    workingSetPriority: 0.4,
    describe: (args) => `grep /${args.pattern}/ in ${args.path ?? "."}${args.glob ? ` (${args.glob})` : ""}`,
    async execute(args, ctx) {
      const target = args.path ?? ctx.root;
      const shown = relative(ctx.root, target) || ".";
      const skips: GrepSkips = { large: [], unreadable: [], undecided: [] };
      const query: GrepQuery = {
        pattern: args.pattern,
        target,
        matchesGlob: globMatcher(args.glob),
        caseInsensitive: args.case_insensitive ?? false,
        literal: args.literal ?? false,
        skipped: skips,
      };
      const cap = args.max_results ?? GREP_DEFAULT_CAP;
      const shownLines: string[] = [];
      const files = new Set<string>();
      const multiplyLinked = new Map<string, boolean>();
      let total = 0;
      try {
        const refusal = await refusedTarget(target, shown, rg !== undefined);
        if (refusal) return refusal;
        const matches = rg ? searchWithRipgrep(ctx.root, rg, query, ctx.signal) : searchWithJs(ctx.root, query, ctx.signal);
        for await (const match of matches) {
          // A file with several hard links may be a file outside the workspace under another name.
          let linked = multiplyLinked.get(match.rel);
          if (linked === undefined) multiplyLinked.set(match.rel, (linked = (await linkCount(join(ctx.root, match.rel))) > 1));
          if (linked) continue;
          total++;
          files.add(match.rel);
          if (shownLines.length < cap) shownLines.push(formatMatch(match));
        }
      } catch (error) {
        if (error instanceof GrepPatternError) return { forModel: `Error: ${error.message}`, summary: `grep: invalid pattern`, isError: true };
        // A refused file inside the target is named itself (error.path), a missing target as given.
        const problem = permissionProblem(error, ctx.root) ?? fileAccessProblem(error, shown);
        if (problem) {
          const summary = problem.kind === "missing" ? `grep ${shown}: not found` : `grep ${shown}: permission denied`;
          return { forModel: `Error: ${problem.message}.`, summary, isError: true };
        }
        throw error;
      }
      if (ctx.signal.aborted) return { forModel: "Aborted.", summary: "grep: aborted", isError: true };
      const what = `/${args.pattern}/ under ${shown}${args.glob ? ` (${args.glob})` : ""}`;
      const linkedFiles = [...multiplyLinked].filter(([, linked]) => linked).map(([rel]) => rel);
      const skipped =
        (linkedFiles.length > 0 ? `\n(skipped ${plural(linkedFiles.length, "file", "files")} with several hard links, which may be files outside the workspace: ${linkedFiles.slice(0, 5).join(", ")}; read_file asks the user before reading one)` : "") +
        skippedNote(skips);
      if (total === 0) {
        const searched = skips.large.length + skips.unreadable.length + skips.undecided.length > 0 ? " in what could be searched" : "";
        return { forModel: `No matches for ${what}${searched}.${skipped}`, summary: `grep ${what}: no matches${searched}`, isError: false };
      }
      const footer = skipped + (total > cap ? `\n(${plural(total, "matching line", "matching lines")} in ${plural(files.size, "file", "files")}; showing the first ${cap} — narrow with path, glob or a more specific pattern)` : "");
      return {
        forModel: shownLines.join("\n") + footer,
        summary: `grep ${what}: ${plural(total, "match", "matches")} in ${plural(files.size, "file", "files")}`,
        isError: false,
      };
    },
  });
}
