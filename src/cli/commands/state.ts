import type { Command } from "commander";
import { UsageError } from "../../errors.ts";
import { once } from "./once-option.ts";
import type { StateRequest } from "../actions/state-change.ts";

/** `valarmind state ...`: options only; the work is imported lazily from ../actions/. */
export function registerState(program: Command): void {
  const state = program
    .command("state")
    .description("show or edit the working state (.valarmind/memory/state.json)");

  const change = async (request: StateRequest) => {
    const { runStateChange } = await import("../actions/state-change.ts");
    await runStateChange(request);
  };
  const words = (parts: string[]) => parts.join(" ");
  const collect = (value: string, previous: string[] = []) => [...previous, value];

  state
    .command("show")
    .description("print the working state")
    .option("--json", "print state.json as stored")
    .option("--toon", "print the TOON projection the prompt receives")
    .option("--all", "include done tasks")
    .action(async (opts: { json?: boolean; toon?: boolean; all?: boolean }) => {
      const { runStateShow } = await import("../actions/state-show.ts");
      await runStateShow(opts);
    });

  state
    .command("goal")
    .description("set the project's goal")
    .argument("<text...>", "the goal")
    .action((text: string[]) => change({ kind: "goal", text: words(text) }));

  state
    .command("now")
    .description("set what is being done now")
    .argument("<text...>", "what is being done")
    .action((text: string[]) => change({ kind: "now", text: words(text) }));

  const decision = state.command("decision").description("record decisions (ids ADR-NNNN)");
  decision
    .command("add")
    .description("record a decision and why it was taken")
    .argument("<title...>", "what was decided")
    .requiredOption("--why <why>", "the reason, in a sentence", once)
    .action((title: string[], opts: { why: string }) => change({ kind: "decision-add", title: words(title), why: opts.why }));

  const task = state.command("task").description("add and update tasks (ids T-N)");
  task
    .command("add")
    .description("add a task")
    .argument("<title...>", "what the task is")
    // No commander default: `once` sees a default as a first value given.
    .option("--status <status>", "open, in_progress, blocked or done (default: open)", once)
    .option("--note <note>", "a note: progress, context", once)
    .option("--file <path>", "a file the task touches (repeatable)", collect)
    .action((title: string[], opts: { status?: string; note?: string; file?: string[] }) =>
      change({ kind: "task-add", title: words(title), status: opts.status ?? "open", note: opts.note, files: opts.file }),
    );
  task
    .command("update")
    .description("change a task's title, status, note or files")
    .argument("<id>", "task id (T-3 or 3)")
    .option("--title <title>", "new title", once)
    .option("--status <status>", "open, in_progress, blocked or done", once)
    .option("--note <note>", "new note ('' clears it)", once)
    .option("--file <path>", "replace the task's files (repeatable)", collect)
    .option("--no-files", "remove the task's files")
    .action((id: string, opts: { title?: string; status?: string; note?: string; file?: string[]; files?: boolean }) => {
      if (opts.files === false && opts.file !== undefined) {
        throw new UsageError("--file and --no-files contradict each other", { hint: "Pass --file PATH (repeatable) to replace the task's files, or --no-files to remove them all." });
      }
      return change({
        kind: "task-update",
        id,
        title: opts.title,
        status: opts.status,
        note: opts.note,
        files: opts.files === false ? [] : opts.file,
      });
    });
  task
    .command("done")
    .description("mark a task done (clears the blockers tied to it)")
    .argument("<id>", "task id")
    .action((id: string) => change({ kind: "task-done", id }));
  task
    .command("block")
    .description("mark a task blocked, and record the blocker")
    .argument("<id>", "task id")
    .argument("<reason...>", "what blocks it")
    .action((id: string, reason: string[]) => change({ kind: "task-block", id, reason: words(reason) }));

  const blocker = state.command("blocker").description("record and clear blockers (ids B-N)");
  blocker
    .command("add")
    .description("record a blocker")
    .argument("<text...>", "what blocks progress")
    .option("--task <id>", "the task it blocks (marks it blocked)", once)
    .action((text: string[], opts: { task?: string }) => change({ kind: "blocker-add", text: words(text), task: opts.task }));
  blocker
    .command("clear")
    .description("clear a blocker (its task goes back to open)")
    .argument("<id>", "blocker id (B-2 or 2)")
    .action((id: string) => change({ kind: "blocker-clear", id }));

  const convention = state.command("convention").description("repository conventions, name → rule");
  convention
    .command("set")
    .description("set a convention")
    .argument("<name>", "e.g. testing")
    .argument("<rule...>", "e.g. bun test")
    .action((name: string, rule: string[]) => change({ kind: "convention-set", name, rule: words(rule) }));
  convention
    .command("unset")
    .description("remove a convention")
    .argument("<name>", "the convention's name")
    .action((name: string) => change({ kind: "convention-unset", name }));
}
