/**
 * `valarmind state goal|now|decision|task|blocker|convention`: one validated, locked, atomic
 * change of state.json per command; prints what changed (stdout) and any notice (stderr).
 */
import { existsSync } from "node:fs";
import { relative } from "node:path";
import { findWorkspaceRoot, workspacePaths } from "../../config/paths.ts";
import { UsageError } from "../../errors.ts";
import * as ops from "../../state/ops.ts";
import { TASK_STATUSES, type TaskStatus } from "../../state/empty-state.ts";
import type { WorkingState } from "../../state/schema.ts";
import { createStateStore } from "../../store/create-state-store.ts";
import { terminalSafe } from "../../ui/terminal-safe-text.ts";

export type StateRequest =
  | { kind: "goal"; text: string }
  | { kind: "now"; text: string }
  | { kind: "decision-add"; title: string; why: string }
  | { kind: "task-add"; title: string; status: string; note: string | undefined; files: string[] | undefined }
  | {
      kind: "task-update";
      id: string;
      title: string | undefined;
      status: string | undefined;
      note: string | undefined;
      files: string[] | undefined;
    }
  | { kind: "task-done"; id: string }
  | { kind: "task-block"; id: string; reason: string }
  | { kind: "blocker-add"; text: string; task: string | undefined }
  | { kind: "blocker-clear"; id: string }
  | { kind: "convention-set"; name: string; rule: string }
  | { kind: "convention-unset"; name: string };

function status(value: string): TaskStatus {
  // ADR-0005: a task is blocked by a blocker, never by a bare status (the model would see a
  // blocked task with no reason, and clearing the blocker could never reopen it).
  if (value === "blocked") {
    throw new UsageError("a task is blocked by a blocker, not by --status", { hint: "Run 'valarmind state task block ID REASON' (add the task first if it is new)." });
  }
  if (ops.isTaskStatus(value)) return value;
  throw new UsageError(`unknown task status ${JSON.stringify(value)}`, { hint: `Use one of: ${TASK_STATUSES.join(", ")}.` });
}

function defined<T extends object>(fields: T): Partial<T> {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** The pure op a request stands for; `at` stamps the items it touches. */
export function opFor(request: StateRequest, at: Date): (state: WorkingState) => ops.OpResult {
  switch (request.kind) {
    case "goal":
      return (s) => ops.setGoal(s, request.text);
    case "now":
      return (s) => ops.setNow(s, request.text);
    case "decision-add":
      return (s) => ops.addDecision(s, request.title, request.why, at);
    case "task-add": {
      const fields = defined({ status: status(request.status), note: request.note, files: request.files });
      return (s) => ops.addTask(s, request.title, fields, at);
    }
    case "task-update": {
      const patch = defined({
        title: request.title,
        status: request.status === undefined ? undefined : status(request.status),
        note: request.note,
        files: request.files,
      });
      if (Object.keys(patch).length === 0) {
        throw new UsageError(`nothing to update for task ${request.id}`, { hint: "Pass --title, --status, --note, --file or --no-files." });
      }
      return (s) => ops.updateTask(s, request.id, patch, at);
    }
    case "task-done":
      return (s) => ops.completeTask(s, request.id, at);
    case "task-block":
      return (s) => ops.blockTask(s, request.id, request.reason, at);
    case "blocker-add":
      return (s) => ops.addBlocker(s, request.text, request.task === undefined ? {} : { task: request.task }, at);
    case "blocker-clear":
      return (s) => ops.clearBlocker(s, request.id, at);
    case "convention-set":
      return (s) => ops.setConvention(s, request.name, request.rule);
    case "convention-unset":
      return (s) => ops.unsetConvention(s, request.name);
  }
}

export async function runStateChange(request: StateRequest): Promise<void> {
  const paths = workspacePaths(findWorkspaceRoot());
  const isNew = !existsSync(paths.stateJson);
  const op = opFor(request, new Date());
  const store = createStateStore(paths);
  const result = await store.update(op);
  // What changed quotes the state (a task title, a blocker, a rule), which a model or a clone may have written: inert.
  for (const notice of result.notices) process.stderr.write(`valarmind: ${terminalSafe(notice)}\n`);
  // Only the file store starts at the local file; a shared store's local file is a copy.
  if (isNew && result.written && store.location === paths.stateJson) {
    process.stderr.write(`valarmind: started a new working state at ${relative(process.cwd(), paths.stateJson) || paths.stateJson}\n`);
  }
  process.stdout.write(`${terminalSafe(result.change)}\n`);
}
