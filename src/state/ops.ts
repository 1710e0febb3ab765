/**
 * Pure edits of the working state. Each returns a new state (the input is never mutated) and a
 * one-line description of what changed, which the CLI prints and the memory tools return to the
 * model. The store stamps `updated_at` when it writes; ops stamp only the items they touch.
 */
import { sliceWhole } from "../slice-whole.ts";
import { UsageError } from "../errors.ts";
import type { Blocker, Decision, Task, TaskStatus, WorkingState } from "./schema.ts";
import { TASK_STATUSES } from "./empty-state.ts";

export interface OpResult {
  state: WorkingState;
  change: string;
}

export interface TaskFields {
  title?: string;
  status?: TaskStatus;
  note?: string;
  files?: string[];
}

const SHOW_HINT = "Run 'valarmind state show' to see the ids.";

/** Longest value a change line quotes whole: a 1 MB `now` replaced was printed (and told to the model) whole. */
const QUOTE_CHARS = 200;

function quote(text: string): string {
  if (text === "") return "(empty)";
  if (text.length <= QUOTE_CHARS) return JSON.stringify(text);
  return `${JSON.stringify(sliceWhole(text, QUOTE_CHARS))}… (${text.length} characters)`;
}

function requireText(what: string, text: string): string {
  const trimmed = text.trim();
  if (trimmed === "") throw new UsageError(`${what} must not be empty`);
  return trimmed;
}

/** A task's files: each a non-empty path (the schema refuses an empty one; say so before writing). */
function requireFiles(files: readonly string[]): string[] {
  const blank = files.findIndex((f) => f.trim() === "");
  if (blank >= 0) {
    throw new UsageError(`a task's file path must not be empty (file ${blank + 1} of ${files.length} is ${JSON.stringify(files[blank])})`, {
      hint: "Pass --file PATH with a path, or --no-files (task update) to remove the task's files.",
    });
  }
  return files.map((f) => f.trim());
}

/** One more than the highest number after `prefix`, exactly (a hand-edited id past 2^53 must not be handed out twice). */
function nextNumber(ids: readonly string[], prefix: string): bigint {
  let max = 0n;
  for (const id of ids) {
    const digits = id.slice(prefix.length);
    if (!id.startsWith(prefix) || !/^\d{1,400}$/.test(digits)) continue;
    const n = BigInt(digits);
    if (n > max) max = n;
  }
  return max + 1n;
}

/** Accepts `T-3`, `t-3` or `3` for a task; `B-2`, `b-2` or `2` for a blocker. */
export function normalizeId(prefix: "T-" | "B-" | "ADR-", raw: string): string {
  const text = raw.trim().toUpperCase();
  // Leading zeros dropped as text: Number() rounds past 2^53 (9007199254740993 named …992, another task).
  if (/^[0-9]+$/.test(text)) return prefix === "ADR-" ? `ADR-${text.padStart(4, "0")}` : `${prefix}${text.replace(/^0+(?=\d)/, "")}`;
  return text;
}

export function isTaskStatus(value: string): value is TaskStatus {
  return (TASK_STATUSES as readonly string[]).includes(value);
}

function findTask(state: WorkingState, rawId: string): { task: Task; index: number } {
  const id = normalizeId("T-", rawId);
  if (!/^T-[0-9]+$/.test(id)) throw new UsageError(`${quote(rawId)} is not a task id`, { hint: `Use a task id like T-3 or 3. ${SHOW_HINT}` });
  // Two tasks with one id (a merge of two state.json files): the one not done yet is the one meant.
  const notDone = state.tasks_open.findIndex((t) => t.id === id && t.status !== "done");
  const index = notDone !== -1 ? notDone : state.tasks_open.findIndex((t) => t.id === id);
  const task = state.tasks_open[index];
  if (!task) throw new UsageError(`no task with id ${id} in the working state`, { hint: SHOW_HINT });
  return { task, index };
}

function replaceTask(state: WorkingState, index: number, task: Task): Task[] {
  return state.tasks_open.map((t, i) => (i === index ? task : t));
}

export function setGoal(state: WorkingState, text: string): OpResult {
  const goal = text.trim();
  if (goal === state.goal) return { state, change: `goal: unchanged (${quote(goal)})` };
  return { state: { ...state, goal }, change: `goal: ${quote(state.goal)} → ${quote(goal)}` };
}

export function setNow(state: WorkingState, text: string): OpResult {
  const now = text.trim();
  if (now === state.now) return { state, change: `now: unchanged (${quote(now)})` };
  return { state: { ...state, now }, change: `now: ${quote(state.now)} → ${quote(now)}` };
}

export function addDecision(state: WorkingState, title: string, why: string, at: Date = new Date()): OpResult {
  const n = nextNumber(state.decisions_recent.map((d) => d.id), "ADR-");
  const decision: Decision = {
    id: `ADR-${String(n).padStart(4, "0")}`,
    title: requireText("a decision's title", title),
    why: why.trim(),
    ts: at.toISOString(),
  };
  return {
    state: { ...state, decisions_recent: [...state.decisions_recent, decision] },
    change: `added decision ${decision.id}: ${decision.title}`,
  };
}

export function addTask(state: WorkingState, title: string, fields: Omit<TaskFields, "title"> = {}, at: Date = new Date()): OpResult {
  const task: Task = {
    id: `T-${nextNumber(state.tasks_open.map((t) => t.id), "T-")}`,
    title: requireText("a task's title", title),
    status: fields.status ?? "open",
    updated_at: at.toISOString(),
  };
  if (fields.note !== undefined && fields.note.trim() !== "") task.note = fields.note.trim();
  if (fields.files !== undefined && fields.files.length > 0) task.files = requireFiles(fields.files);
  return {
    state: { ...state, tasks_open: [...state.tasks_open, task] },
    change: `added task ${task.id} (${task.status}): ${task.title}`,
  };
}

/** Blockers tied to `taskId` are cleared when the task leaves the `blocked` status. */
function releaseBlockers(blockers: readonly Blocker[], taskId: string): { kept: Blocker[]; cleared: string[] } {
  const kept = blockers.filter((b) => b.task !== taskId);
  const cleared = blockers.filter((b) => b.task === taskId).map((b) => b.id);
  return { kept, cleared };
}

export function updateTask(state: WorkingState, id: string, patch: TaskFields, at: Date = new Date()): OpResult {
  const { task, index } = findTask(state, id);
  const next: Task = { ...task };
  const changes: string[] = [];
  if (patch.title !== undefined) {
    next.title = requireText("a task's title", patch.title);
    if (next.title !== task.title) changes.push(`title ${quote(task.title)} → ${quote(next.title)}`);
  }
  if (patch.status !== undefined && patch.status !== task.status) {
    next.status = patch.status;
    changes.push(`status ${task.status} → ${patch.status}`);
  }
  if (patch.note !== undefined) {
    const note = patch.note.trim();
    if (note === "") delete next.note;
    else next.note = note;
    if (note !== (task.note ?? "")) changes.push(`note ${quote(task.note ?? "")} → ${quote(note)}`);
  }
  if (patch.files !== undefined) {
    const files = requireFiles(patch.files);
    if (files.length === 0) delete next.files;
    else next.files = files;
    const before = (task.files ?? []).join(", ");
    const after = files.join(", ");
    if (before !== after) changes.push(`files [${before}] → [${after}]`);
  }
  if (changes.length === 0) {
    return { state, change: `task ${task.id} unchanged` };
  }
  next.updated_at = at.toISOString();
  let blockers = state.blockers;
  if (task.status === "blocked" && next.status !== "blocked") {
    const released = releaseBlockers(state.blockers, task.id);
    blockers = released.kept;
    if (released.cleared.length > 0) changes.push(`cleared blocker ${released.cleared.join(", ")}`);
  }
  return {
    state: { ...state, tasks_open: replaceTask(state, index, next), blockers },
    change: `task ${task.id}: ${changes.join("; ")}`,
  };
}

export function completeTask(state: WorkingState, id: string, at: Date = new Date()): OpResult {
  const { task } = findTask(state, id);
  if (task.status === "done") return { state, change: `task ${task.id} was already done` };
  const result = updateTask(state, task.id, { status: "done" }, at);
  return { state: result.state, change: `${result.change} (${task.title})` };
}

export function blockTask(state: WorkingState, id: string, reason: string, at: Date = new Date()): OpResult {
  const { task, index } = findTask(state, id);
  const text = requireText("the reason a task is blocked", reason);
  const blocker: Blocker = {
    id: `B-${nextNumber(state.blockers.map((b) => b.id), "B-")}`,
    text,
    ts: at.toISOString(),
    task: task.id,
  };
  // The note stays the task's own (progress, context); the reason lives in the blocker (ADR-0005).
  const next: Task = { ...task, status: "blocked", updated_at: at.toISOString() };
  return {
    state: { ...state, tasks_open: replaceTask(state, index, next), blockers: [...state.blockers, blocker] },
    change: `task ${task.id}: status ${task.status} → blocked; added blocker ${blocker.id}: ${text}`,
  };
}

export function addBlocker(state: WorkingState, text: string, opts: { task?: string } = {}, at: Date = new Date()): OpResult {
  if (opts.task !== undefined) return blockTask(state, opts.task, text, at);
  const blocker: Blocker = {
    id: `B-${nextNumber(state.blockers.map((b) => b.id), "B-")}`,
    text: requireText("a blocker's text", text),
    ts: at.toISOString(),
  };
  return {
    state: { ...state, blockers: [...state.blockers, blocker] },
    change: `added blocker ${blocker.id}: ${blocker.text}`,
  };
}

/** Clearing the last blocker of a blocked task puts the task back to `open`. */
export function clearBlocker(state: WorkingState, rawId: string, at: Date = new Date()): OpResult {
  const id = normalizeId("B-", rawId);
  const blocker = state.blockers.find((b) => b.id === id);
  if (!blocker) throw new UsageError(`no blocker with id ${id} in the working state`, { hint: SHOW_HINT });
  const blockers = state.blockers.filter((b) => b.id !== id);
  const linked = blocker.task;
  const reopen =
    linked !== undefined &&
    !blockers.some((b) => b.task === linked) &&
    state.tasks_open.some((t) => t.id === linked && t.status === "blocked");
  const tasks = reopen
    ? state.tasks_open.map((t): Task => (t.id === linked ? { ...t, status: "open", updated_at: at.toISOString() } : t))
    : state.tasks_open;
  return {
    state: { ...state, blockers, tasks_open: tasks },
    change: `cleared blocker ${id}: ${blocker.text}${reopen ? `; task ${linked}: status blocked → open` : ""}`,
  };
}

export function setConvention(state: WorkingState, key: string, value: string): OpResult {
  const name = requireText("a convention's name", key);
  // The schema's rule for names: one line (a pasted line break is the user's slip, not a bug).
  if (/[\r\n\u2028\u2029]/.test(name)) throw new UsageError(`a convention's name is one line; ${quote(name)} holds a line break`, { hint: "Give the name without the line break, e.g. 'lint'." });
  const rule = value.trim();
  // Own properties only: a convention named "constructor" or "__proto__" has no inherited "previous value".
  const before = Object.hasOwn(state.conventions, name) ? state.conventions[name] : undefined;
  if (before === rule) return { state, change: `convention ${name}: unchanged (${quote(rule)})` };
  return {
    state: { ...state, conventions: { ...state.conventions, [name]: rule } },
    change: before === undefined ? `convention ${name}: set to ${quote(rule)}` : `convention ${name}: ${quote(before)} → ${quote(rule)}`,
  };
}

export function unsetConvention(state: WorkingState, key: string): OpResult {
  const name = key.trim();
  if (!Object.hasOwn(state.conventions, name)) {
    throw new UsageError(`no convention named ${quote(name)} in the working state`, { hint: SHOW_HINT });
  }
  const { [name]: removed, ...rest } = state.conventions;
  return { state: { ...state, conventions: rest }, change: `convention ${name}: removed (was ${quote(removed ?? "")})` };
}
