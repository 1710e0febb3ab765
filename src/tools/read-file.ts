/**
 * read_file: a text file's lines with line numbers, optionally a range. Binary files, FIFOs,
 * sockets and devices are refused; a file with several hard links asks first (another of its
 * names may be outside the workspace); the file is opened without following a symlink.
 */
import { sliceWhole } from "../slice-whole.ts";
import { relative } from "node:path";
import { hardLinkWarning, linkCount, readConfined } from "./confined-file.ts";
import { toolText } from "./descriptions.ts";
import { Type, type Static } from "@sinclair/typebox";
import { defineTool, Nullable } from "./define-tool.ts";
import type { Tool, ToolContext, ToolResult } from "./types.ts";

const ReadFileParams = Type.Object(
  {
    path: Type.String({ minLength: 1, description: "workspace-relative" }),
    start_line: Type.Optional(Nullable(Type.Integer({ minimum: 1, description: "1-based" }))),
    end_line: Type.Optional(Nullable(Type.Integer({ minimum: 1, description: "inclusive" }))),
  },
  { additionalProperties: false },
);

export type ReadFileArgs = Static<typeof ReadFileParams>;

export interface ReadFileLimits {
  /** Files larger than this are refused (use grep or a range via run_shell). */
  maxBytes: number;
  /** Lines returned when no end_line is given. */
  maxLines: number;
  /** Longer lines are cut, with a marker. */
  maxLineChars: number;
}

export const READ_FILE_LIMITS: ReadFileLimits = { maxBytes: 5 * 1024 * 1024, maxLines: 2000, maxLineChars: 2000 };

const error = (forModel: string, summary: string): ToolResult => ({ forModel, summary, isError: true });

/** "UTF-16LE" / "UTF-16BE" when the bytes start with that byte-order mark. */
export function utf16Bom(bytes: Uint8Array): string | undefined {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return "UTF-16LE";
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return "UTF-16BE";
  return undefined;
}

/** `bytes` as UTF-8: a UTF-16 file (by its byte-order mark) decoded, anything else as it is. */
export function asUtf8(bytes: Buffer): Buffer {
  const utf16 = utf16Bom(bytes);
  return utf16 ? Buffer.from(new TextDecoder(utf16 === "UTF-16LE" ? "utf-16le" : "utf-16be").decode(bytes.subarray(2)), "utf8") : bytes;
}

/** A NUL byte in the first 8 KiB is how git and ripgrep recognise binary files too. */
export function looksBinary(bytes: Uint8Array): boolean {
  return bytes.subarray(0, 8192).includes(0);
}


function formatLines(lines: string[], first: number, maxLineChars: number): string {
  const width = String(first + lines.length - 1).length;
  return lines
    .map((line, i) => {
      const kept = sliceWhole(line, maxLineChars);
      const text = kept.length < line.length ? `${kept} [… line cut: ${line.length - kept.length} more characters; run_shell with cut -c shows the rest]` : line;
      return `${String(first + i).padStart(width, " ")}\t${text}`;
    })
    .join("\n");
}

export function createReadFileTool(limits: ReadFileLimits = READ_FILE_LIMITS): Tool {
  async function execute(args: ReadFileArgs, ctx: ToolContext): Promise<ToolResult> {
    const rel = relative(ctx.root, args.path) || ".";
    const read = await readConfined(args.path, rel, limits.maxBytes);
    if (!read.ok) {
      switch (read.reason) {
        case "missing":
          return error(`Error: ${rel} does not exist. Use list_files or grep to find the right path.`, `${rel}: not found`);
        case "permission":
          return error(`Error: ${read.problem}.`, `${rel}: permission denied`);
        case "directory":
          return error(`Error: ${rel} is a directory; use list_files to see its contents.`, `${rel}: is a directory`);
        case "too_large":
          return error(
            `Error: ${rel} is ${read.size} bytes, over the ${limits.maxBytes}-byte cap of read_file. Use grep to find the lines you need, or run_shell with sed -n 'A,Bp'.`,
            `${rel}: too large (${read.size} bytes)`,
          );
        default:
          return error(`Error: ${read.problem}.`, `${rel}: refused (${read.reason === "special" ? "not a regular file" : "moved while opening"})`);
      }
    }
    const bytes = read.bytes;
    // UTF-16 with its byte-order mark (Windows tools write it): decoded, and said, since edits cannot keep it.
    const utf16 = utf16Bom(bytes);
    if (!utf16 && looksBinary(bytes)) {
      return error(`Error: ${rel} is a binary file (${bytes.length} bytes); its content is not shown.`, `${rel}: binary file, not shown`);
    }
    const text = asUtf8(bytes).toString("utf8");
    const note = utf16 ? `(${rel} is ${utf16} text, shown decoded; edit_file and write_file do not change UTF-16 files: convert it with iconv first)\n` : "";
    if (text === "") return { forModel: `(${rel} is empty)`, summary: `read ${rel} (empty)`, isError: false };
    const lines = text.replace(/\r?\n$/, "").split(/\r?\n/);
    const total = lines.length;
    const start = args.start_line ?? 1;
    if (start > total) {
      return error(`Error: start_line ${start} is past the end of ${rel}, which has ${total} lines.`, `${rel}: start_line past end`);
    }
    if (args.end_line !== undefined && args.end_line < start) {
      return error(`Error: end_line ${args.end_line} is before start_line ${start}.`, `${rel}: empty line range`);
    }
    const end = Math.min(total, args.end_line ?? start + limits.maxLines - 1);
    const body = formatLines(lines.slice(start - 1, end), start, limits.maxLineChars);
    const partial = start > 1 || end < total;
    const footer = end < total ? `\n(showing lines ${start}-${end} of ${total}; call read_file with start_line ${end + 1} to continue)` : "";
    return {
      forModel: note + body + footer,
      summary: `read ${rel} (${partial ? `lines ${start}-${end} of ${total}` : total === 1 ? "1 line" : `${total} lines`})`,
      isError: false,
    };
  }

  return defineTool({
    name: "read_file",
    description: toolText("read_file"),
    kind: "read",
    parameters: ReadFileParams,
    pathArgs: ["path"],
    workingSetPriority: 0.6,
    describe: (args) => `read ${args.path}${args.start_line || args.end_line ? ` lines ${args.start_line ?? 1}-${args.end_line ?? "…"}` : ""}`,
    prepare: async (args, ctx) => {
      const rel = relative(ctx.root, args.path) || ".";
      const escalate = hardLinkWarning(rel, await linkCount(args.path));
      return {
        ready: true,
        kind: "read",
        description: `read ${rel}`,
        ...(escalate !== undefined ? { escalate } : {}),
        apply: () => execute(args, ctx),
      };
    },
    execute,
  });
}
