/**
 * The readable view of the working state printed by `valarmind state show`. Pure: colour is a
 * parameter (on only for a TTY without NO_COLOR), styled with node:util (no UI library in core).
 */
import { styleText } from "node:util";
import type { Task, WorkingState } from "../../state/schema.ts";
import { terminalSafe, terminalSafeDeep } from "../../ui/terminal-safe-text.ts";

type Style = "bold" | "dim" | "yellow" | "red" | "green" | "cyan";

export function useColor(stream: { isTTY?: boolean }): boolean {
  const noColor = process.env.NO_COLOR;
  return stream.isTTY === true && (noColor === undefined || noColor === "");
}

function shortTime(iso: string): string {
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)}`;
}

const STATUS_ORDER: Record<Task["status"], number> = { in_progress: 0, blocked: 1, open: 2, done: 3 };
const STATUS_STYLE: Record<Task["status"], Style> = { in_progress: "cyan", blocked: "red", open: "yellow", done: "green" };

export function renderStateView(raw: WorkingState, options: { all: boolean; color: boolean; source: string }): string {
  // Every string of the state made inert (the model and a cloned repository write it), before colour is added.
  const state = terminalSafeDeep(raw);
  const paint = (style: Style, text: string) => (options.color ? styleText(style, text) : text);
  const lines: string[] = [];
  lines.push(`${paint("bold", "Working state")}  ${paint("dim", `(${options.source}, updated ${shortTime(state.updated_at)})`)}`);
  lines.push(`goal: ${state.goal || paint("dim", "(not set — valarmind state goal TEXT)")}`);
  lines.push(`now:  ${state.now || paint("dim", "(not set — valarmind state now TEXT)")}`);

  const done = state.tasks_open.filter((t) => t.status === "done");
  const shown = state.tasks_open
    .filter((t) => options.all || t.status !== "done")
    .sort((a, b) => STATUS_ORDER[a.status] - STATUS_ORDER[b.status]);
  lines.push("", paint("bold", `Tasks (${state.tasks_open.length - done.length} open, ${done.length} done)`));
  if (shown.length === 0) lines.push(paint("dim", "  none"));
  for (const t of shown) {
    lines.push(`  ${t.id.padEnd(6)} ${paint(STATUS_STYLE[t.status], `[${t.status}]`.padEnd(13))} ${t.title}`);
    if (t.note) lines.push(`         ${paint("dim", `note: ${t.note}`)}`);
    if (t.files) lines.push(`         ${paint("dim", `files: ${t.files.join(", ")}`)}`);
  }
  if (!options.all && done.length > 0) lines.push(paint("dim", `  (${done.length} done hidden; --all shows them)`));

  lines.push("", paint("bold", `Blockers (${state.blockers.length})`));
  if (state.blockers.length === 0) lines.push(paint("dim", "  none"));
  for (const b of state.blockers) {
    lines.push(`  ${b.id.padEnd(6)} ${b.text}${b.task ? paint("dim", `  (blocks ${b.task})`) : ""}`);
  }

  lines.push("", paint("bold", `Decisions (${state.decisions_recent.length})`));
  if (state.decisions_recent.length === 0) lines.push(paint("dim", "  none"));
  for (const d of state.decisions_recent) {
    lines.push(`  ${d.id}  ${paint("dim", d.ts.slice(0, 10))}  ${d.title}`);
    if (d.why) lines.push(`            ${paint("dim", `why: ${d.why}`)}`);
  }

  const conventions = Object.entries(state.conventions);
  lines.push("", paint("bold", `Conventions (${conventions.length})`));
  if (conventions.length === 0) lines.push(paint("dim", "  none"));
  for (const [name, rule] of conventions) lines.push(`  ${name}: ${rule}`);
  return `${lines.join("\n")}\n`;
}
