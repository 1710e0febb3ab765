/**
 * Scripted sessions of the memory-cost benchmark (bench/memory-cost.bench.ts, issue 12): what the
 * user types and what the fake model answers, generated deterministically.
 *
 * - `chatSession(40)`: chat-heavy, no tool calls, a ~3k-token log pasted every 10 turns.
 * - `chatSession(200, { facts: true })`: the same style over 200 turns, with 20 planted facts
 *   (conventions, decisions, open tasks, the goal) that the model records through memory tools
 *   when the user states them, and later supersessions (a changed port, a reversed decision, a
 *   finished task). `PLANTED_FACTS` says what must still be in the last request.
 */
import type { FakeToolCall } from "../../support/fake-responses-server.ts";

export interface CostTurn {
  user: string;
  /** Memory-tool calls the model makes before answering (one step), if any. */
  calls?: FakeToolCall[];
  answer: string;
}

/** A fact the last request must carry: every needle, and none of `gone` (a superseded value). */
export interface PlantedFact {
  name: string;
  needles: string[];
  gone?: string[];
}

function rng(seed: number): () => number {
  let s = (seed * 2654435761) >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return ((s >>> 0) % 100_000) / 100_000;
  };
}

const NOUNS = ["cache", "router", "handler", "queue", "index", "migration", "schema", "worker", "session", "token", "limit", "bucket", "retry", "timeout", "slug", "store", "request", "response", "header", "cookie", "log line", "metric", "alert", "deploy", "branch", "fixture", "snapshot", "parser", "encoder", "budget"];
const VERBS = ["checks", "rewrites", "drops", "keeps", "counts", "splits", "merges", "validates", "caches", "retries", "streams", "batches", "orders", "reports", "rejects", "flushes", "pins", "bounds", "traces", "rotates"];
const ADJ = ["stale", "hot", "empty", "slow", "partial", "signed", "cold", "nested", "duplicate", "missing", "late", "large", "shared", "private", "sorted", "broken", "fresh", "idle", "noisy", "strict"];
const LINKS = ["because", "so", "while", "unless", "after", "before", "since", "and then", "which means", "but"];

function pick<T>(list: readonly T[], r: () => number): T {
  return list[Math.floor(r() * list.length)] as T;
}

/** One sentence of plausible, never-repeating engineering prose. */
function sentence(r: () => number, n: number): string {
  const clause = () => `the ${pick(ADJ, r)} ${pick(NOUNS, r)} ${pick(VERBS, r)} the ${pick(NOUNS, r)}`;
  const text = `${clause()} ${pick(LINKS, r)} ${clause()} (${n}.${Math.floor(r() * 1000)})`;
  return `${text[0]?.toUpperCase()}${text.slice(1)}.`;
}

function prose(seed: number, sentences: number): string {
  const r = rng(seed);
  const out: string[] = [];
  for (let i = 0; i < sentences; i++) out.push(sentence(r, seed * 100 + i));
  return out.join(" ");
}

/** A ~3k-token server log, different for every seed. */
export function pastedLog(seed: number): string {
  const r = rng(seed + 7919);
  const lines: string[] = [];
  for (let i = 0; i < 95; i++) {
    const ms = Math.floor(r() * 900) + 3;
    const status = pick([200, 200, 200, 201, 302, 404, 429, 500, 503], r);
    const id = Math.floor(r() * 0xffffff).toString(16).padStart(6, "0");
    lines.push(`2026-11-${String(10 + (seed % 18)).padStart(2, "0")}T10:${String(i % 60).padStart(2, "0")}:${String(Math.floor(r() * 60)).padStart(2, "0")}.${String(Math.floor(r() * 1000)).padStart(3, "0")}Z ${status >= 500 ? "ERROR" : status >= 400 ? "WARN" : "INFO"} [worker-${Math.floor(r() * 8)}] req=${id} ${pick(["GET", "POST", "DELETE"], r)} /links/${id.slice(0, 4)} status=${status} dur=${ms}ms`);
  }
  return lines.join("\n");
}

const ASKS = [
  "What do you think about how the {n} handles this?",
  "Can you explain why the {n} behaves like that under load?",
  "Is there a simpler way to structure the {n}?",
  "How would you test the {n} without a network?",
  "Walk me through what happens to the {n} on a restart.",
  "Should we worry about the {n} when traffic doubles?",
];

interface Fact {
  turn: number;
  user: string;
  calls: FakeToolCall[];
}

const convention = (name: string, rule: string): FakeToolCall => ({ name: "memory_set_convention", arguments: { name, rule } });
const decision = (title: string, why: string): FakeToolCall => ({ name: "memory_record_decision", arguments: { title, why } });
const task = (title: string): FakeToolCall => ({ name: "memory_task", arguments: { action: "add", title } });
const done = (id: string): FakeToolCall => ({ name: "memory_task", arguments: { action: "done", id } });

/** 20 facts stated over the first 150 turns, three superseded later. */
const FACTS: Fact[] = [
  { turn: 2, user: "Goal for this quarter: ship links v1.0 with SQLite storage and signed cookies.", calls: [{ name: "memory_set_goal", arguments: { goal: "Ship links v1.0 with SQLite storage and signed cookies" } }] },
  { turn: 6, user: "Remember: the dev server runs on port 4173.", calls: [convention("dev port", "the dev server listens on port 4173")] },
  { turn: 13, user: "We decided to store links in SQLite via bun:sqlite, not Postgres.", calls: [decision("Store links in SQLite via bun:sqlite", "one file, no server in CI")] },
  { turn: 19, user: "Convention: one test file per module, named after it.", calls: [convention("tests", "one test file per module, named after the module")] },
  { turn: 24, user: "Please add a task: rotate the signing key every 30 days.", calls: [task("Rotate the signing key every 30 days")] },
  { turn: 31, user: "Convention: error bodies are plain text with a status code, never HTML.", calls: [convention("errors", "error bodies are plain text with an explicit status code, never HTML")] },
  { turn: 37, user: "Decision: slugs are 7 characters of base62.", calls: [decision("Slugs are 7 characters of base62", "short and about 3.5e12 values")] },
  { turn: 42, user: "Add a task: write the migration from the JSON store to SQLite.", calls: [task("Write the migration from the JSON store to SQLite")] },
  { turn: 48, user: "Convention: the staging host is staging-links.internal.", calls: [convention("staging host", "staging runs at staging-links.internal")] },
  { turn: 55, user: "Decision: rate limit is 60 requests per minute per IP.", calls: [decision("Rate limit 60 requests per minute per IP", "protects the redirect path")] },
  { turn: 61, user: "Task: document the /metrics endpoint for the ops team.", calls: [task("Document the /metrics endpoint for the ops team")] },
  { turn: 68, user: "Convention: commit messages start with the module name and a colon.", calls: [convention("commits", "commit messages start with the module name and a colon")] },
  { turn: 74, user: "Decision: we log the slug and status, never the full target URL.", calls: [decision("Log slug and status, never the target URL", "target URLs can carry tokens")] },
  { turn: 81, user: "Task: add a health check that pings the database.", calls: [task("Add a health check that pings the database")] },
  { turn: 89, user: "Convention: feature flags live in config/flags.json.", calls: [convention("flags", "feature flags live in config/flags.json")] },
  { turn: 96, user: "Decision: the redirect answers 302, not 301, so we can change targets.", calls: [decision("Redirect with 302, not 301", "targets may change; browsers cache 301")] },
  { turn: 104, user: "Task: set up nightly backups of links.db to the bucket vault-links-backup.", calls: [task("Nightly backups of links.db to vault-links-backup")] },
  { turn: 117, user: "Convention: the on-call channel is #links-oncall.", calls: [convention("on-call", "the on-call channel is #links-oncall")] },
  { turn: 128, user: "Decision: cookies are signed with HMAC-SHA256.", calls: [decision("Sign cookies with HMAC-SHA256", "standard, fast, in Web Crypto")] },
  { turn: 141, user: "Task: remove the legacy /v0 routes after the migration.", calls: [task("Remove the legacy /v0 routes after the migration")] },
  // Supersessions.
  { turn: 160, user: "Change of plan: the dev server now runs on port 5173, not 4173.", calls: [convention("dev port", "the dev server listens on port 5173")] },
  { turn: 170, user: "We reverse the SQLite decision: links go to Postgres after all, the ops team runs it.", calls: [decision("Reverse: store links in Postgres, not SQLite", "the ops team runs Postgres for us")] },
  { turn: 180, user: "The migration task from JSON to SQLite is finished, mark it done.", calls: [done("T-2")] },
];

export const PLANTED_FACTS: PlantedFact[] = [
  { name: "goal", needles: ["links v1.0"] },
  { name: "dev port (superseded)", needles: ["5173"], gone: ["4173"] },
  { name: "storage decision (reversed)", needles: ["Postgres"] },
  { name: "tests convention", needles: ["one test file per module"] },
  { name: "key rotation task", needles: ["signing key every 30 days"] },
  { name: "errors convention", needles: ["never HTML"] },
  { name: "slug decision", needles: ["base62"] },
  { name: "migration task (done)", needles: ["JSON store to SQLite"] },
  { name: "staging host", needles: ["staging-links.internal"] },
  { name: "rate limit decision", needles: ["60 requests per minute"] },
  { name: "metrics task", needles: ["/metrics endpoint"] },
  { name: "commit convention", needles: ["module name and a colon"] },
  { name: "logging decision", needles: ["never the target URL"] },
  { name: "health check task", needles: ["pings the database"] },
  { name: "flags convention", needles: ["config/flags.json"] },
  { name: "redirect decision", needles: ["302"] },
  { name: "backup task", needles: ["vault-links-backup"] },
  { name: "on-call convention", needles: ["#links-oncall"] },
  { name: "cookie decision", needles: ["HMAC-SHA256"] },
  { name: "legacy routes task", needles: ["/v0 routes"] },
];

/**
 * `turns` turns of chat: a question of 15–60 words (a log pasted every 10 turns, from turn 5),
 * an answer of 120–330 words; with `facts`, the planted facts at their turns.
 */
export function chatSession(turns: number, options: { facts?: boolean } = {}): CostTurn[] {
  const out: CostTurn[] = [];
  const facts = new Map((options.facts ? FACTS : []).map((f) => [f.turn, f]));
  for (let n = 1; n <= turns; n++) {
    const r = rng(n * 31 + 5);
    const ask = pick(ASKS, r).replace("{n}", pick(NOUNS, r));
    const context = prose(n * 13 + 1, 1 + Math.floor(r() * 3));
    let user = `${context} ${ask}`;
    if (n % 10 === 5) user = `Here is the log from this morning's run (turn ${n}), what stands out?\n\n${pastedLog(n)}`;
    const fact = facts.get(n);
    if (fact) user = `${fact.user} ${ask}`;
    const answer = `${prose(n * 17 + 3, 6 + Math.floor(r() * 12))}\n\n${prose(n * 19 + 2, 3 + Math.floor(r() * 4))}`;
    out.push({ user, answer, ...(fact ? { calls: fact.calls } : {}) });
  }
  return out;
}
