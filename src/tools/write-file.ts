/** write_file: create or overwrite a file (parent directories created); a diff when overwriting. */
import { relative } from "node:path";
import { toolText } from "./descriptions.ts";
import { hardLinkWarning } from "./confined-file.ts";
import { applyPlannedText, currentText, toolError } from "./file-change.ts";
import { sensitiveWriteReason } from "./sensitive-paths.ts";
import { fileDiff } from "./file-diff.ts";
import { usualEnding } from "./line-endings.ts";
import { Type, type Static } from "@sinclair/typebox";
import { defineTool } from "./define-tool.ts";
import { applyPreparation, type Preparation, type Tool, type ToolResult } from "./types.ts";

/** The most write_file writes at once: the same bound as read_file's. */
export const WRITE_FILE_MAX_BYTES = 5 * 1024 * 1024;

const WriteFileParams = Type.Object(
  {
    path: Type.String({ minLength: 1, description: "workspace-relative" }),
    content: Type.String(),
  },
  { additionalProperties: false },
);

export type WriteFileArgs = Static<typeof WriteFileParams>;

/**
 * What overwriting `before` with `content` writes: the file's own form kept where the model cannot
 * see it. read_file shows CRLF as LF and no byte-order mark, so content without any "\r" over a
 * CRLF file is written with CRLF, and a file's BOM stays (else every line, or the first, changes).
 */
export function keepingFileForm(before: string | undefined, content: string): string {
  if (before === undefined) return content;
  let out = content;
  if (!out.includes("\r") && usualEnding(before) === "\r\n") out = out.replaceAll("\n", "\r\n");
  if (before.startsWith("\uFEFF") && !out.startsWith("\uFEFF")) out = `\uFEFF${out}`;
  return out;
}

export function createWriteFileTool(): Tool {
  async function prepare(args: WriteFileArgs, root: string): Promise<Preparation> {
    const rel = relative(root, args.path);
    const bytes = Buffer.byteLength(args.content, "utf8");
    if (bytes > WRITE_FILE_MAX_BYTES) {
      return { ready: false, result: toolError(`write_file writes at most ${WRITE_FILE_MAX_BYTES / (1024 * 1024)} MB (like read_file reads); this content is ${bytes} bytes. Write a generator script and run it, or split the file.`, `${rel}: content too large`) };
    }
    const current = await currentText(args.path, rel);
    if (current.exists && "denied" in current) return { ready: false, result: toolError(`${current.denied}.`, `${rel}: permission denied`) };
    if (current.exists && "problem" in current) {
      return { ready: false, result: toolError(`${current.problem}; write_file only writes text files.`, `${rel}: cannot write`) };
    }
    const before = current.exists && "text" in current ? current.text : undefined;
    const links = current.exists && "links" in current ? current.links : 1;
    const content = keepingFileForm(before, args.content);
    if (before === content) {
      return { ready: false, result: { forModel: `${rel} already has exactly this content; nothing was written.`, summary: `${rel}: unchanged`, isError: false } };
    }
    const diff = await fileDiff(rel, before, content);
    const lines = content === "" ? 0 : content.replace(/\r?\n$/, "").split("\n").length;
    const verb = before === undefined ? "create" : "overwrite";
    const escalate = hardLinkWarning(rel, links) ?? sensitiveWriteReason(rel, root);
    return {
      ready: true,
      kind: "write",
      description: `${verb} ${rel} (${lines} lines)`,
      diff: diff.text,
      ...(escalate !== undefined ? { escalate } : {}),
      async apply(): Promise<ToolResult> {
        const failed = await applyPlannedText(root, rel, before, content, links);
        if (failed) return failed;
        const what = before === undefined ? `Created ${rel} (${lines} lines)` : `Overwrote ${rel} (+${diff.added} −${diff.removed} lines)`;
        return {
          forModel: `${what}.`,
          summary: before === undefined ? `created ${rel} (${lines} lines)` : `wrote ${rel} (+${diff.added} −${diff.removed})`,
          diff: diff.text,
          isError: false,
        };
      },
    };
  }

  return defineTool({
    name: "write_file",
    description: toolText("write_file"),
    kind: "write",
    parameters: WriteFileParams,
    pathArgs: ["path"],
    describe: (args) => `write ${args.path}`,
    prepare: (args, ctx) => prepare(args, ctx.root),
    execute: (args, ctx) => applyPreparation(prepare(args, ctx.root)),
  });
}
