/**
 * Memory tools for the model: set the goal and what is being done now, keep tasks, set
 * conventions. They change only `.valarmind/memory/state.json`, through the state store (locked,
 * validated, atomic), and say what changed. They need no approval (docs/adr/0030).
 */
import { addTask, blockTask, completeTask, setConvention, setGoal, setNow, unsetConvention, updateTask, type OpResult, type TaskFields } from "../state/ops.ts";
import { TASK_STATUSES, type WorkingState } from "../state/schema.ts";
import { toolText } from "./descriptions.ts";
import { applyMemoryOp, describeTasks, type MemoryStore } from "./memory-store.ts";
import { Type, type Static } from "@sinclair/typebox";
import { defineTool, Nullable } from "./define-tool.ts";
import type { Tool, ToolResult } from "./types.ts";

type TaskStatus = (typeof TASK_STATUSES)[number];

const SetGoalParams = Type.Object({ goal: Type.String() }, { additionalProperties: false });
const SetNowParams = Type.Object({ now: Type.String() }, { additionalProperties: false });
const SetConventionParams = Type.Object(
  {
    name: Type.String({ minLength: 1 }),
    rule: Type.Optional(Nullable(Type.String())),
  },
  { additionalProperties: false },
);
const TaskParams = Type.Object(
  {
    action: Type.Unsafe<"add" | "update" | "done" | "block">({ type: "string", enum: ["add", "update", "done", "block"] }),
    id: Type.Optional(Nullable(Type.String())),
    title: Type.Optional(Nullable(Type.String())),
    status: Type.Optional(Type.Unsafe<TaskStatus>({ type: ["string", "null"], enum: [...TASK_STATUSES, null] })),
    note: Type.Optional(Nullable(Type.String())),
    reason: Type.Optional(Nullable(Type.String())),
    files: Type.Optional(Nullable(Type.Array(Type.String()))),
  },
  { additionalProperties: false },
);

export type SetGoalArgs = Static<typeof SetGoalParams>;
export type SetNowArgs = Static<typeof SetNowParams>;
export type SetConventionArgs = Static<typeof SetConventionParams>;
export type TaskArgs = Static<typeof TaskParams>;

export function createSetGoalTool(store: () => MemoryStore): Tool {
  return defineTool({
    name: "memory_set_goal",
    description: toolText("memory_set_goal"),
    kind: "memory",
    parameters: SetGoalParams,
    describe: () => "set the goal",
    execute: (args) => applyMemoryOp(store(), (s) => setGoal(s, args.goal), "Call memory_set_goal again."),
  });
}

export function createSetNowTool(store: () => MemoryStore): Tool {
  return defineTool({
    name: "memory_set_now",
    description: toolText("memory_set_now"),
    kind: "memory",
    parameters: SetNowParams,
    describe: () => "set what is being done now",
    execute: (args) => applyMemoryOp(store(), (s) => setNow(s, args.now), "Call memory_set_now again."),
  });
}

export function createSetConventionTool(store: () => MemoryStore): Tool {
  return defineTool({
    name: "memory_set_convention",
    description: toolText("memory_set_convention"),
    kind: "memory",
    parameters: SetConventionParams,
    describe: (args) => `set convention ${args.name}`,
    execute(args) {
      const remove = args.rule === undefined || args.rule.trim() === "";
      return applyMemoryOp(
        store(),
        (s) => (remove ? unsetConvention(s, args.name) : setConvention(s, args.name, args.rule ?? "")),
        "Check the convention's name in the working state and call memory_set_convention again.",
      );
    },
  });
}

function missing(field: string, action: string): ToolResult {
  return {
    forModel: `Error: memory_task with action "${action}" needs "${field}". Call memory_task again with it.`,
    summary: `memory_task ${action}: missing ${field}`,
    isError: true,
  };
}

export function createTaskTool(store: () => MemoryStore): Tool {
  return defineTool({
    name: "memory_task",
    description: toolText("memory_task"),
    kind: "memory",
    parameters: TaskParams,
    // The files a task names count as touched, so the prompt's file list keeps them in view.
    locations: (args) => (args.files ?? []).filter((path) => path !== "").map((path) => ({ path, access: "read" as const })),
    describe: (args) => `${args.action} task${args.id ? ` ${args.id}` : ""}${args.title ? `: ${args.title}` : ""}`,
    async execute(args) {
      const s = store();
      const fields: TaskFields = {};
      if (args.title !== undefined) fields.title = args.title;
      if (args.status !== undefined) fields.status = args.status;
      if (args.note !== undefined) fields.note = args.note;
      if (args.files !== undefined) fields.files = args.files;
      if (args.action === "add") {
        if (args.title === undefined) return missing("title", "add");
        return applyMemoryOp(s, (st) => addTask(st, args.title ?? "", fields), "Call memory_task again with a title.");
      }
      const id = args.id;
      if (id === undefined) return missing("id", args.action);
      let op: (st: WorkingState) => OpResult;
      if (args.action === "update") op = (st) => updateTask(st, id, fields);
      else if (args.action === "done") op = (st) => completeTask(st, id);
      else {
        const reason = args.reason;
        if (reason === undefined) return missing("reason", "block");
        op = (st) => blockTask(st, id, reason);
      }
      const result = await applyMemoryOp(s, op, "Call memory_task again with a valid id.");
      // An unknown id is the usual mistake: the task list lets the model pick the right one.
      return result.isError ? { ...result, forModel: `${result.forModel} ${describeTasks((await s.read()).state)}` } : result;
    },
  });
}
