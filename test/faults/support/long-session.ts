/**
 * A scripted 200-turn session for budget-pressure tests: the benchmark's first four turns (a port,
 * a decision, a convention and a blocked task, all through memory tools), eight more planted
 * facts, then filler turns (questions with answers of a few hundred tokens, file reads that fill
 * the working set) with a ~2.3k-token log pasted every 10th turn (~3k at turns 50 and 150: over
 * what a 4.5k or 5k budget leaves beside tools and rules), and a last turn that asks for
 * the facts without repeating them. Each user message starts with `[tN]`, so the fake model finds
 * its script even when a message reaches it cut head+tail.
 */
import type { FakeToolCall } from "../../support/fake-responses-server.ts";
import { lastUserText, toolOutputsThisTurn } from "../../support/fake-responses-server.ts";
import { BENCH_TURNS, EARLY_FACTS, type EarlyFact, type ScriptedTurn } from "../../agent/support/bench-conversation.ts";
import { answerText } from "../../agent/support/bench-prose.ts";

const memory = (name: string, args: Record<string, unknown>): FakeToolCall => ({ name: `memory_${name}`, arguments: args });
const read = (path: string): FakeToolCall => ({ name: "read_file", arguments: { path } });
const answer = (lead: string) => ({ lead, topic: "the links service", file: "src/server.ts", fn: "router.handle" });

/** Facts planted in turns 5–12, each through a memory tool; `needles` must reach the last request. */
const PLANTED: Array<{ fact: EarlyFact; user: string; call: FakeToolCall[] }> = [
  {
    fact: { name: "deploy decision (turn 5)", turn: 5, needles: ["blue-green"] },
    user: "We deploy with blue-green releases on Fly.io, so a bad release can be switched back in seconds. Record that decision.",
    call: [memory("record_decision", { title: "Deploy with blue-green releases on Fly.io", why: "a bad release is switched back in seconds" })],
  },
  {
    fact: { name: "commit convention (turn 6)", turn: 6, needles: ["Conventional Commits"] },
    user: "Commit messages follow Conventional Commits with a scope, like feat(links): …. Note the convention.",
    call: [memory("set_convention", { name: "commits", rule: "Conventional Commits with a scope, e.g. feat(links): add pagination" })],
  },
  {
    fact: { name: "CI task (turn 7)", turn: 7, needles: ["GitHub Actions"] },
    user: "Add a task: migrate CI from Travis to GitHub Actions.",
    call: [memory("task", { action: "add", title: "Migrate CI from Travis to GitHub Actions" })],
  },
  {
    fact: { name: "staging host (turn 8)", turn: 8, needles: ["staging.links.internal", "8443"] },
    user: "Staging runs at staging.links.internal on port 8443. Keep that as a convention.",
    call: [memory("set_convention", { name: "staging", rule: "staging.links.internal, port 8443" })],
  },
  {
    fact: { name: "redirect decision (turn 9)", turn: 9, needles: ["never 301"] },
    user: "Decision: redirects answer 302, never 301 — browsers cache a 301 forever and we could not change a link. Record it.",
    call: [memory("record_decision", { title: "Redirects answer 302, never 301", why: "browsers cache a 301 forever" })],
  },
  {
    fact: { name: "lint convention (turn 10)", turn: 10, needles: ["biome check"] },
    user: "Linting is `biome check`, not eslint. Note that as a convention.",
    call: [memory("set_convention", { name: "lint", rule: "biome check (no eslint)" })],
  },
  {
    fact: { name: "blocked image task (turn 11)", turn: 11, needles: ["registry credentials"] },
    user: "Publishing the Docker image is blocked: ops still owe us the registry credentials. Add the task and block it.",
    call: [memory("task", { action: "add", title: "Publish the Docker image" }), memory("task", { action: "block", id: "T-3", reason: "waiting for the registry credentials from ops" })],
  },
  {
    fact: { name: "on-call convention (turn 12)", turn: 12, needles: ["Dana Reyes"] },
    user: "Dana Reyes is on call for the links service this month; note it.",
    call: [memory("set_convention", { name: "on-call", rule: "Dana Reyes, this month" })],
  },
];

export const PLANTED_FACTS: EarlyFact[] = [...EARLY_FACTS, ...PLANTED.map((p) => p.fact)];

/** An access log of ~33 tokens a line, different each time (`seed`). */
export function pastedLog(seed: number, lines: number): string {
  const paths = ["/links", "/healthz", "/aB3xYz9", "/links?limit=50", "/Qm7PpL2"];
  const out = [`Here is the access log from the staging box, run ${seed}; anything odd?`, ""];
  for (let i = 0; i < lines; i++) {
    const n = (seed * 7919 + i * 104729) % 100000;
    const path = paths[n % paths.length] ?? "/";
    const status = n % 17 === 0 ? 500 : n % 5 === 0 ? 404 : 200;
    out.push(`2026-11-${String(10 + (seed % 18)).padStart(2, "0")}T0${i % 10}:${String(i % 60).padStart(2, "0")}:${String(n % 60).padStart(2, "0")}.${n % 1000}Z GET ${path} status=${status} ms=${(n % 97) + 1} id=req-${n.toString(36)}`);
  }
  return out.join("\n");
}

/** Turns whose paste (~3k tokens) cannot fit whole under 5k beside tools, rules and VALARMIND.md. */
export const OVERSIZED_PASTES = [50, 150];

const READABLE = ["src/server.ts", "src/router.ts", "src/links.ts", "src/db.ts", "src/auth.ts", "src/config.ts", "docs/api.md"];

function fillerTurn(n: number): ScriptedTurn {
  if (n % 10 === 0) return { user: pastedLog(n, OVERSIZED_PASTES.includes(n) ? 90 : 70), steps: [], answer: answer(`The log of run ${n} shows mostly 200s, a few 404s on unknown slugs and some 500s worth a look.`) };
  if (n % 3 === 0) {
    const path = READABLE[n % READABLE.length] ?? "src/server.ts";
    return { user: `Read ${path} again and tell me what stands out.`, steps: [{ calls: [read(path)] }], answer: answer(`In ${path} the structure is unchanged since last time.`) };
  }
  return { user: `Question ${n}: how would you make the service more robust around ${["timeouts", "retries", "logging", "config", "tests"][n % 5]}?`, steps: [], answer: answer(`For question ${n}, start small and measure first.`) };
}

const LAST: ScriptedTurn = {
  user: "Before I go: which port does the dev server use, what did we decide about storage, deploys and redirects, what are our conventions, and what is still blocked?",
  steps: [],
  answer: answer("From the working state: port 4173, SQLite via bun:sqlite, blue-green deploys, 302 redirects; the conventions and the two blocked tasks are listed there."),
};

/** The whole script, turn 1 first; `turns` long (at least 13). */
export function longSession(turns: number): ScriptedTurn[] {
  const script: ScriptedTurn[] = [...BENCH_TURNS.slice(0, 4)];
  for (const planted of PLANTED) script.push({ user: planted.user, steps: [{ calls: planted.call }], answer: answer("Noted.") });
  for (let n = script.length + 1; n < turns; n++) script.push(fillerTurn(n));
  script.push(LAST);
  return script.map((turn, i) => ({ ...turn, user: `[t${i + 1}] ${turn.user}` }));
}

/** The fake model's reply to a turn request of `script`: the next step's calls, or the answer. */
export function replyFor(script: readonly ScriptedTurn[], body: Record<string, unknown>): { text?: string; calls?: FakeToolCall[] } | undefined {
  const n = Number(/^\[t(\d+)\]/.exec(lastUserText(body))?.[1] ?? 0);
  const turn = script[n - 1];
  if (!turn) return undefined;
  const done = toolOutputsThisTurn(body).length;
  let seen = 0;
  for (const step of turn.steps) {
    if (seen === done) return { calls: step.calls, ...(step.text ? { text: step.text } : {}) };
    seen += step.calls.length;
  }
  return { text: answerText(n, turn.answer) };
}
