/**
 * Deterministic working states for tests and benchmarks: the 20-decision/30-task state and
 * a 500-item stress state. Text is varied but reproducible (seeded), so token figures are stable.
 */
import type { Decision, Task, WorkingState } from "../../src/state/schema.ts";
import { emptyState } from "../../src/state/schema.ts";

const VERBS = ["Implement", "Fix", "Refactor", "Document", "Test", "Benchmark", "Review", "Migrate", "Split", "Harden"];
const THINGS = [
  "the state store's atomic write",
  "TOON projection of open tasks",
  "prompt builder budget cutoff",
  "sliding window block eviction",
  "manifest schema validation",
  "tool registry path confinement",
  "approval expiry after three turns",
  "session transcript fsync",
  "OpenAI client retry on 429",
  "working set PRIORITY decay",
  "grep fallback without ripgrep",
  "headless JSON event printer",
];
const REASONS = [
  "keeps the prompt prefix stable for caching",
  "one source of truth for types and schema",
  "a crash must never leave half a file",
  "the model needs ids it can refer to",
  "exact counts beat estimates in the manifest",
  "fewer moving parts for a terminal tool",
];
const FILES = ["src/state/store.ts", "src/prompt/builder.ts", "src/memory/window.ts", "src/tools/registry.ts", "src/cli/main.ts"];

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 0x1_0000_0000;
  };
}

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)] as T;
}

function stamp(base: number, minutes: number): string {
  return new Date(base + minutes * 60_000).toISOString();
}

export function buildState(decisions: number, tasks: number, seed = 7): WorkingState {
  const random = rng(seed);
  const base = Date.UTC(2026, 0, 5, 9, 0, 0);
  const state = emptyState(new Date(base));
  state.goal = "Ship valarmind's memory layer: working state, sliding window and a manifest for every model call";
  state.now = "Wiring the TOON projection of the working state into the prompt builder";
  state.decisions_recent = Array.from({ length: decisions }, (_, i): Decision => ({
    id: `ADR-${String(i + 1).padStart(4, "0")}`,
    title: `${pick(random, VERBS)} ${pick(random, THINGS)}`,
    why: pick(random, REASONS),
    ts: stamp(base, i * 97),
  }));
  state.tasks_open = Array.from({ length: tasks }, (_, i): Task => {
    const roll = random();
    const status = roll < 0.15 ? "done" : roll < 0.25 ? "in_progress" : roll < 0.3 ? "blocked" : "open";
    const task: Task = { id: `T-${i + 1}`, title: `${pick(random, VERBS)} ${pick(random, THINGS)}`, status, updated_at: stamp(base, i * 53) };
    if (status === "blocked") task.note = `waiting on ${pick(random, THINGS)}`;
    if (random() < 0.3) task.files = [pick(random, FILES)];
    return task;
  });
  const blocked = state.tasks_open.filter((t) => t.status === "blocked");
  state.blockers = blocked.map((t, i) => ({ id: `B-${i + 1}`, text: t.note ?? "blocked", ts: t.updated_at, task: t.id }));
  state.conventions = { language: "TypeScript (strict)", runtime: "Bun", testing: "bun test", style: "small files, no utils.ts" };
  state.updated_at = stamp(base, tasks * 60);
  return state;
}

/** The 20-decision, 30-task state of the targets. */
export const state20x30 = (): WorkingState => buildState(20, 30);
/** 500 items: 200 decisions and 300 tasks. */
export const stress500 = (): WorkingState => buildState(200, 300, 11);
