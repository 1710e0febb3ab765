/**
 * memory_record_decision: adds a decision (ADR-NNNN) to the working state and, with
 * `write_adr: true`, also writes `docs/adr/NNNN-slug.md` in the workspace. The ADR file is a
 * workspace write, so that call is approved like one (the gate sees kind "write" and the new file
 * as a diff); the file is created exclusively and never overwrites an existing one. With an ADR,
 * the decision's number is the next free one in docs/adr/ as well, so id and file agree. The ADR
 * is valarmind's own text (not a file the user edits through a diff), so it is redacted like
 * every file valarmind writes; the approval diff shows the redacted text that will be written.
 */
import { readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { UsageError } from "../errors.ts";
import { redactSecrets } from "../secrets/redact-secrets.ts";
import { addDecision } from "../state/ops.ts";
import type { WorkingState } from "../state/schema.ts";
import { ConfinedWriteError, writeConfined } from "./confined-file.ts";
import { confinePath } from "./confine.ts";
import { toolText } from "./descriptions.ts";
import { fileDiff } from "./file-diff.ts";
import { applyMemoryOp, type MemoryStore } from "./memory-store.ts";
import { Type, type Static } from "@sinclair/typebox";
import { defineTool, Nullable } from "./define-tool.ts";
import { applyPreparation, type Preparation, type Tool, type ToolResult } from "./types.ts";

const RecordDecisionParams = Type.Object(
  {
    title: Type.String({ minLength: 1, description: "one line" }),
    why: Type.String({ description: "one or two sentences" }),
    write_adr: Type.Optional(Nullable(Type.Boolean())),
  },
  { additionalProperties: false },
);

export type RecordDecisionArgs = Static<typeof RecordDecisionParams>;

export const ADR_DIR = "docs/adr";

export function adrSlug(title: string): string {
  const slug = title
    .toLowerCase()
    .normalize("NFKD")
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 60)
    .replace(/-+$/, "");
  return slug === "" ? "decision" : slug;
}

function numberOf(id: string): number {
  const n = Number(id.replace(/^ADR-/, ""));
  return Number.isInteger(n) ? n : 0;
}

async function adrFileNumbers(root: string): Promise<number[]> {
  try {
    const names = await readdir(join(root, ADR_DIR));
    return names.map((n) => /^(\d{4,})-/.exec(n)?.[1]).filter((n): n is string => n !== undefined).map(Number);
  } catch {
    return []; // no docs/adr yet
  }
}

function nextAdrNumber(state: WorkingState, fileNumbers: number[]): number {
  return Math.max(0, ...state.decisions_recent.map((d) => numberOf(d.id)), ...fileNumbers) + 1;
}

export function renderAdr(template: string, fields: { number: number; id: string; title: string; why: string; date: string }): string {
  const values: Record<string, string> = {
    number: String(fields.number).padStart(4, "0"),
    id: fields.id,
    title: fields.title.trim(),
    why: fields.why.trim() === "" ? "(not stated)" : fields.why.trim(),
    date: fields.date,
  };
  return `${template.replace(/\{\{(\w+)\}\}/g, (all, key: string) => values[key] ?? all)}\n`;
}

/** Adds the decision with exactly number `n` (the op numbers it; an ADR file fixes the number). */
function addDecisionNumbered(state: WorkingState, title: string, why: string, n: number) {
  const result = addDecision(state, title, why);
  const id = `ADR-${String(n).padStart(4, "0")}`;
  if (state.decisions_recent.some((d) => d.id === id)) {
    throw new UsageError(`decision ${id} was recorded by someone else meanwhile`, { hint: "nothing was written" });
  }
  const decisions = result.state.decisions_recent.map((d, i, all) => (i === all.length - 1 ? { ...d, id } : d));
  return { state: { ...result.state, decisions_recent: decisions }, change: result.change.replace(/ADR-\d+/, id) };
}

export function createRecordDecisionTool(store: () => MemoryStore): Tool {
  async function prepare(args: RecordDecisionArgs, root: string): Promise<Preparation> {
    const s = store();
    const retry = "Call memory_record_decision again with a non-empty title.";
    if (!args.write_adr) {
      return { ready: true, kind: "memory", description: `record decision: ${args.title}`, apply: () => applyMemoryOp(s, (st) => addDecision(st, args.title, args.why), retry) };
    }
    if (args.title.trim() === "") return { ready: false, result: { forModel: `Error: the decision's title is empty. ${retry}`, summary: "decision: empty title", isError: true } };
    const { state } = await s.read();
    const n = nextAdrNumber(state, await adrFileNumbers(root));
    const rel = `${ADR_DIR}/${String(n).padStart(4, "0")}-${adrSlug(args.title)}.md`;
    // docs/adr could be a symlink leading out of the workspace: confined like any write.
    const { abs } = confinePath(root, rel, { forWrite: true });
    const content = redactSecrets(
      renderAdr(toolText("adr-template"), {
        number: n,
        id: `ADR-${String(n).padStart(4, "0")}`,
        title: args.title,
        why: args.why,
        date: new Date().toISOString().slice(0, 10),
      }),
    );
    const diff = (await fileDiff(rel, undefined, content)).text;
    return {
      ready: true,
      kind: "write",
      description: `record decision ADR-${String(n).padStart(4, "0")} and create ${rel}`,
      diff,
      writes: [rel],
      async apply(): Promise<ToolResult> {
        // Opened again now, after the approval, without following symlinks (confined-file.ts).
        try {
          await writeConfined(root, rel, { before: undefined, after: content, approvedLinks: 1 });
        } catch (error) {
          if (error instanceof ConfinedWriteError) {
            return { forModel: `Error: ${error.message} Nothing was recorded; call memory_record_decision again.`, summary: `${rel}: not written`, isError: true };
          }
          throw error;
        }
        const result = await applyMemoryOp(s, (st) => addDecisionNumbered(st, args.title, args.why, n), retry);
        // The state and the file belong together: no file for a decision that was not recorded.
        if (result.isError) await rm(abs, { force: true });
        else return { ...result, forModel: `${result.forModel} Wrote ${rel}.`, summary: `${result.summary}; wrote ${rel}`, diff };
        return result;
      },
    };
  }

  return defineTool({
    name: "memory_record_decision",
    description: toolText("memory_record_decision"),
    kind: "memory",
    parameters: RecordDecisionParams,
    describe: (args) => `record decision: ${args.title}${args.write_adr ? ` (with an ADR in ${ADR_DIR}/)` : ""}`,
    prepare: (args, ctx) => prepare(args, ctx.root),
    execute: (args, ctx) => applyPreparation(prepare(args, ctx.root)),
  });
}
