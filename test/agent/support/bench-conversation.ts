/**
 * The scripted 40-turn headless session of bench/agent.bench.ts: what the user types and what the
 * fake model answers (tool calls step by step, then a final answer). Early turns state facts the
 * model records through memory tools — a port, a decision, a convention, a blocked task — and the
 * last turn asks about them without repeating them.
 */
import type { FakeToolCall } from "../../support/fake-responses-server.ts";
import { answerText, CHANGELOG, LOAD_TEST, PAGINATION_TEST, RATE_LIMIT, RATE_LIMIT_TEST, SQLITE_STORE, STACK_TRACE, type AnswerSpec } from "./bench-prose.ts";

export interface ScriptedStep {
  /** Commentary before the calls. */
  text?: string;
  calls: FakeToolCall[];
}

export interface ScriptedTurn {
  user: string;
  steps: ScriptedStep[];
  answer: AnswerSpec;
}

/** A fact stated early; `needles` must all appear in the final request for it to count as kept. */
export interface EarlyFact {
  name: string;
  turn: number;
  needles: string[];
}

export const EARLY_FACTS: EarlyFact[] = [
  { name: "port (turn 1)", turn: 1, needles: ["4173"] },
  { name: "decision (turn 2)", turn: 2, needles: ["SQLite", "bun:sqlite"] },
  { name: "convention (turn 3)", turn: 3, needles: ["one test file per module", "no network"] },
  { name: "blocked task (turn 4)", turn: 4, needles: ["signed session cookies", "security review"] },
];

const read = (path: string, start?: number, end?: number): FakeToolCall => ({
  name: "read_file",
  arguments: { path, ...(start !== undefined ? { start_line: start } : {}), ...(end !== undefined ? { end_line: end } : {}) },
});
const grep = (pattern: string, path?: string): FakeToolCall => ({ name: "grep", arguments: { pattern, ...(path ? { path } : {}) } });
const shell = (command: string): FakeToolCall => ({ name: "run_shell", arguments: { command } });
const edit = (path: string, old_string: string, new_string: string): FakeToolCall => ({ name: "edit_file", arguments: { path, old_string, new_string } });
const write = (path: string, content: string): FakeToolCall => ({ name: "write_file", arguments: { path, content } });
const memory = (name: string, args: Record<string, unknown>): FakeToolCall => ({ name: `memory_${name}`, arguments: args });
const step = (calls: FakeToolCall[], text?: string): ScriptedStep => ({ calls, ...(text ? { text } : {}) });
const answer = (lead: string, topic: string, file: string, fn: string): AnswerSpec => ({ lead, topic, file, fn });

export const BENCH_TURNS: ScriptedTurn[] = [
  {
    user: "Hi! Quick context before we start: this is the links service, a small URL shortener on Bun. The dev server runs on port 4173 (`bun run dev`) — please remember that, I'll refer to it later. Our goal for this sprint is shipping v0.3 with SQLite storage. Can you look at src/server.ts and tell me how requests are routed?",
    steps: [
      step([memory("set_goal", { goal: "Ship links v0.3 with SQLite storage" }), memory("set_convention", { name: "dev server", rule: "bun run dev serves on http://localhost:4173 (port 4173)" })], "Noting the goal and the dev server port first."),
      step([read("src/server.ts"), read("docs/api.md")]),
    ],
    answer: answer("Requests go through `createRouter()` from src/router.ts: the server registers `GET /healthz`, `GET /links`, `POST /links` and `GET /:slug`, and `Bun.serve` hands every request to `router.handle`. I noted the goal and that the dev server runs on port 4173.", "routing", "src/server.ts", "router.handle"),
  },
  {
    user: "We decided to store links in SQLite through bun:sqlite instead of Postgres: one file, no server to run in CI, and the data is small. Please record that decision. Then check src/db.ts for anything Postgres-specific.",
    steps: [
      step([memory("record_decision", { title: "Store links in SQLite via bun:sqlite, not Postgres", why: "one file, no database server in CI, the data set is small" })]),
      step([read("src/db.ts")]),
      step([grep("\\$[0-9]|postgres|Postgres", "src")]),
    ],
    answer: answer("Recorded the decision (SQLite via bun:sqlite instead of Postgres). In src/db.ts the only Postgres-specific parts are the `$1`-style placeholders and `openDb`, which throws; the CREATE TABLE statement is portable.", "the database layer", "src/db.ts", "openDb"),
  },
  {
    user: "Convention for this repo: tests run with `bun test`, one test file per module under test/, and no network access in tests (use the in-memory database). Note it down.",
    steps: [step([memory("set_convention", { name: "tests", rule: "bun test; one test file per module under test/; no network in tests (in-memory database)" })])],
    answer: answer("Noted the testing convention: `bun test`, one test file per module under test/, no network access.", "the test layout", "test/router.test.ts", "createRouter"),
  },
  {
    user: "The auth refactor (moving to signed session cookies) is blocked until the security team reviews the token storage — they said two weeks. Add it as a task and mark it blocked with that reason.",
    steps: [
      step([memory("task", { action: "add", title: "Refactor auth to signed session cookies", files: ["src/auth.ts"] })]),
      step([memory("task", { action: "block", id: "T-1", reason: "waiting for the security review of the token storage (about two weeks)" })]),
    ],
    answer: answer("Added T-1 (refactor auth to signed session cookies) and marked it blocked on the security review of the token storage.", "authentication", "src/auth.ts", "requireSession"),
  },
  { user: "ok. what files are in src?", steps: [step([shell("ls -la src")])], answer: answer("src/ has six modules: server, router, links, db, auth and config.", "the module layout", "src/", "loadConfig") },
  { user: "Read src/links.ts and explain how slugs are generated.", steps: [step([read("src/links.ts")])], answer: answer("`createSlug` draws SLUG_LENGTH characters from the 58-character alphabet with `Math.random`; `MapLinkStore.put` retries up to five times on a collision.", "slug generation", "src/links.ts", "createSlug") },
  {
    user: `Running the tests I get this:\n\n${STACK_TRACE}\n\nWhat's going on?`,
    steps: [step([read("test/links.test.ts")]), step([grep("SLUG_LENGTH|createSlug")])],
    answer: answer("The test expects 7-character slugs but SLUG_LENGTH in src/links.ts is 6, so the test is ahead of the code.", "slug length", "src/links.ts", "createSlug"),
  },
  {
    user: "Fix it please — the slug length should be 7, not 6.",
    steps: [step([edit("src/links.ts", "export const SLUG_LENGTH = 6;", "export const SLUG_LENGTH = 7;")]), step([shell('grep -n "SLUG_LENGTH" src/links.ts')])],
    answer: answer("SLUG_LENGTH is 7 now; the failing test matches the code again.", "slug length", "src/links.ts", "createSlug"),
  },
  { user: "Add a task: add rate limiting to POST /links.", steps: [step([memory("task", { action: "add", title: "Rate-limit POST /links", files: ["src/server.ts"] })])], answer: answer("Added T-2: rate-limit POST /links.", "rate limiting", "src/server.ts", "router.post") },
  { user: "How does the router match paths with params?", steps: [step([read("src/router.ts")])], answer: answer("`match` compares segment by segment: a `:name` segment captures the decoded value, any other segment must be equal, and the segment counts must agree. A path that matches with another method yields 405.", "path matching", "src/router.ts", "match") },
  { user: "short: what's in package.json scripts?", steps: [step([read("package.json")])], answer: answer("dev (bun --watch src/server.ts), start, test (bun test) and typecheck (tsc --noEmit).", "the scripts", "package.json", "dev") },
  {
    user: "Let's start on the SQLite storage. Set 'now' to implementing the SQLite link store. Then sketch the schema for the links table.",
    steps: [step([memory("set_now", { now: "Implementing the SQLite link store (src/store/sqlite.ts)" })])],
    answer: answer("Set now. The table keeps slug as TEXT PRIMARY KEY, url, owner, created_at (ISO text) and hits; an index on created_at serves the listing.", "the links schema", "src/db.ts", "CREATE_LINKS"),
  },
  { user: "Write src/store/sqlite.ts with that schema and a LinkStore class with get/put/list.", steps: [step([write("src/store/sqlite.ts", SQLITE_STORE)])], answer: answer("Wrote src/store/sqlite.ts: `SqliteLinkStore` implements LinkStore; `put` uses INSERT OR IGNORE and retries on a slug collision, `get` counts the hit in the same statement.", "the SQLite store", "src/store/sqlite.ts", "SqliteLinkStore") },
  { user: "grep for all uses of the in-memory map store", steps: [step([grep("MapLinkStore")])], answer: answer("MapLinkStore is used in src/server.ts (the store instance) and in test/links.test.ts.", "the map store", "src/server.ts", "MapLinkStore") },
  {
    user: "Replace the map store in src/server.ts with the SQLite one.",
    steps: [
      step([read("src/server.ts", 1, 20)]),
      step([
        edit("src/server.ts", 'import { MapLinkStore } from "./links.ts";', 'import { SqliteLinkStore } from "./store/sqlite.ts";'),
        edit("src/server.ts", "const store = new MapLinkStore();", "const store = new SqliteLinkStore(config.dbPath);"),
      ]),
    ],
    answer: answer("The server now builds a `SqliteLinkStore` from `config.dbPath`; that field does not exist yet, so the config needs it next.", "wiring the store", "src/server.ts", "SqliteLinkStore"),
  },
  { user: "run git status", steps: [step([shell("git status --short")])], answer: answer("Modified: src/links.ts and src/server.ts; new: src/store/.", "the working tree", "src/server.ts", "git") },
  {
    user: "Now the config: the DB path should come from a LINKS_DB environment variable, default ./data/links.sqlite. Update src/config.ts accordingly and keep the validation style of PORT.",
    steps: [
      step([read("src/config.ts")]),
      step([
        edit("src/config.ts", "  tokensFile: string;\n}", "  tokensFile: string;\n  dbPath: string;\n}"),
        edit("src/config.ts", '    tokensFile: env.TOKENS_FILE ?? "./data/tokens.json",\n', '    tokensFile: env.TOKENS_FILE ?? "./data/tokens.json",\n    dbPath: env.LINKS_DB ?? "./data/links.sqlite",\n'),
      ]),
    ],
    answer: answer("Config has `dbPath` now, from LINKS_DB with ./data/links.sqlite as the default.", "configuration", "src/config.ts", "loadConfig"),
  },
  { user: "Check test/router.test.ts — does it cover the 404 case?", steps: [step([read("test/router.test.ts")])], answer: answer("No: it covers exact paths, params and 405, but not an unknown path.", "router tests", "test/router.test.ts", "router.handle") },
  {
    user: "Add that test.",
    steps: [step([edit("test/router.test.ts", "    expect(res.status).toBe(405);\n  });\n", '    expect(res.status).toBe(405);\n  });\n\n  test("404 for an unknown path", async () => {\n    const router = createRouter();\n    router.get("/links", () => new Response("[]"));\n    const res = await router.handle(new Request("http://x/nope"));\n    expect(res.status).toBe(404);\n  });\n')])],
    answer: answer("Added the 404 test to test/router.test.ts.", "router tests", "test/router.test.ts", "router.handle"),
  },
  { user: "What does the auth middleware do right now? (just explain, don't change anything)", steps: [step([read("src/auth.ts")])], answer: answer("`requireSession` takes the bearer token from the Authorization header and looks it up in the tokens JSON file, loaded once and cached.", "authentication", "src/auth.ts", "requireSession") },
  {
    user: "Mark the rate limiting task as in progress and look at how we could add a token bucket in front of POST /links.",
    steps: [step([memory("task", { action: "update", id: "T-2", status: "in_progress" })]), step([read("src/server.ts", 20, 40)])],
    answer: answer("T-2 is in progress. A token bucket keyed by the session token fits right after `requireSession` in the POST /links handler.", "rate limiting", "src/server.ts", "router.post"),
  },
  { user: `Here are the results of a quick load test against POST /links on the dev box:\n\n${LOAD_TEST}\n\nThoughts?`, steps: [], answer: answer("About 4.4k requests per second with a 56 ms p99 is fine for this service; the 42 connection resets under load are worth a look, and the 429s show the limiter would be exercised.", "load behaviour", "src/server.ts", "Bun.serve") },
  { user: "Implement the token bucket in src/ratelimit.ts", steps: [step([write("src/ratelimit.ts", RATE_LIMIT)])], answer: answer("Wrote src/ratelimit.ts with `TokenBucket.take(key)`; time is injectable for tests.", "rate limiting", "src/ratelimit.ts", "TokenBucket") },
  {
    user: "Wire it into POST /links.",
    steps: [
      step([
        edit("src/server.ts", 'import { requireSession } from "./auth.ts";', 'import { requireSession } from "./auth.ts";\nimport { TokenBucket } from "./ratelimit.ts";\n\nconst limiter = new TokenBucket({ capacity: 20, refillPerSecond: 1 });'),
        edit("src/server.ts", '  if (!session) return new Response("unauthorized", { status: 401 });\n', '  if (!session) return new Response("unauthorized", { status: 401 });\n  if (!limiter.take(session.token)) return new Response("too many requests", { status: 429 });\n'),
      ]),
    ],
    answer: answer("POST /links now answers 429 when the token's bucket is empty (20 at once, one per second).", "rate limiting", "src/server.ts", "limiter.take"),
  },
  { user: "ls the test dir", steps: [step([shell("ls test")])], answer: answer("test/ holds links.test.ts and router.test.ts.", "the test layout", "test/", "ls") },
  { user: "Write test/ratelimit.test.ts", steps: [step([write("test/ratelimit.test.ts", RATE_LIMIT_TEST)])], answer: answer("Wrote test/ratelimit.test.ts: capacity then refusal, refill after a second, independent keys.", "rate limiting tests", "test/ratelimit.test.ts", "TokenBucket") },
  { user: "Rate limiting done — close the task.", steps: [step([memory("task", { action: "done", id: "T-2" })])], answer: answer("Closed T-2.", "rate limiting", "src/ratelimit.ts", "TokenBucket") },
  { user: "grep for TODO in src", steps: [step([grep("TODO", "src")]), step([read("src/html.ts")])], answer: answer("One TODO: dark mode for the HTML pages in src/html.ts (#12), waiting on the design team's palette.", "leftovers", "src/html.ts", "page") },
  { user: "Explain the difference between our slug alphabet and base62, and whether we should switch.", steps: [], answer: answer("Our alphabet is base58: base62 minus 0, O, I and l, which are easy to confuse when read aloud or typed from a screenshot. Seven base58 characters give about 2.2e12 slugs, plenty for this service, so I would not switch.", "the slug alphabet", "src/links.ts", "SLUG_ALPHABET") },
  {
    user: "Read README.md and update the 'Storage' section for SQLite.",
    steps: [
      step([read("README.md")]),
      step([
        edit("README.md", "Links are kept in memory and lost on restart. Postgres support is sketched in src/db.ts.\n", "Links are stored in SQLite (bun:sqlite) in the file named by LINKS_DB (default ./data/links.sqlite).\n"),
        edit("README.md", "6-character base58 slugs", "7-character base58 slugs"),
      ]),
    ],
    answer: answer("Updated the Storage section and the slug length in README.md.", "documentation", "README.md", "Storage"),
  },
  { user: "Record a decision: slugs stay 7 characters from the base58 alphabet, no vanity slugs in v0.3.", steps: [step([memory("record_decision", { title: "Slugs: 7 base58 characters, no vanity slugs in v0.3", why: "readable aloud, enough space, vanity slugs need moderation we do not have" })])], answer: answer("Recorded the slug decision.", "slugs", "src/links.ts", "createSlug") },
  { user: "What's the schema migration story? Check src/db.ts again.", steps: [step([read("src/db.ts", 18, 30)])], answer: answer("There is none yet: CREATE TABLE IF NOT EXISTS runs at start-up, so a new column would never be added to an existing file.", "migrations", "src/db.ts", "CREATE_LINKS") },
  {
    user: "Add a migrations table and a migrate() function to src/store/sqlite.ts, run from the constructor.",
    steps: [
      step([read("src/store/sqlite.ts", 18, 26)]),
      step([edit("src/store/sqlite.ts", "    this.db = new Database(path, { create: true });\n    this.db.run(CREATE_LINKS);\n  }", '    this.db = new Database(path, { create: true });\n    this.migrate();\n  }\n\n  /** Applies the migrations not yet recorded in the migrations table, in order. */\n  private migrate(): void {\n    this.db.run("CREATE TABLE IF NOT EXISTS migrations (id INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)");\n    const done = new Set(this.db.query<{ id: number }, []>("SELECT id FROM migrations").all().map((r) => r.id));\n    const steps = [CREATE_LINKS, "CREATE INDEX IF NOT EXISTS links_created_at ON links (created_at DESC)"];\n    steps.forEach((sql, i) => {\n      if (done.has(i + 1)) return;\n      this.db.transaction(() => {\n        this.db.run(sql);\n        this.db.run("INSERT INTO migrations (id, applied_at) VALUES (?1, ?2)", [i + 1, new Date().toISOString()]);\n      })();\n    });\n  }')]),
    ],
    answer: answer("`migrate()` records applied steps in a migrations table and applies the rest in order, each in a transaction.", "migrations", "src/store/sqlite.ts", "migrate"),
  },
  { user: "show me wc -l of all ts files", steps: [step([shell("wc -l src/*.ts src/store/*.ts test/*.ts")])], answer: answer("About 400 lines in total; server.ts and links.ts are the largest.", "code size", "src/", "wc") },
  { user: "Any obvious perf issue in list()?", steps: [step([grep("list\\(", "src")])], answer: answer("`list()` returns every link; with SQLite that is a full scan sorted by created_at, fine with the new index but unbounded in size.", "listing", "src/store/sqlite.ts", "list") },
  {
    user: "Add pagination to GET /links: ?limit= and ?cursor=, default limit 50, max 200. The cursor can simply be the created_at of the last link returned. Update docs/api.md too.",
    steps: [
      step([read("src/server.ts", 20, 30), read("docs/api.md")]),
      step([edit("docs/api.md", "There is no pagination yet; with a few hundred links that is fine.", "Paginated: `?limit=` (1–200, default 50) and `?cursor=` (the `next` value of the previous page). The answer is `{ \"links\": [...], \"next\": \"...\" }`; `next` is absent on the last page.")]),
      step([edit("src/server.ts", 'router.get("/links", async () => {\n  const links = await store.list();\n  return Response.json(links);\n});', 'router.get("/links", async (req) => {\n  const url = new URL(req.url);\n  const limit = Math.min(Number(url.searchParams.get("limit") ?? 50), 200);\n  if (!Number.isInteger(limit) || limit < 1) return new Response("limit must be 1-200", { status: 400 });\n  const cursor = url.searchParams.get("cursor");\n  const all = await store.list();\n  const page = all.filter((l) => cursor === null || l.createdAt < cursor).slice(0, limit);\n  const next = page.length === limit ? page.at(-1)?.createdAt : undefined;\n  return Response.json({ links: page, ...(next ? { next } : {}) });\n});')]),
    ],
    answer: answer("GET /links takes limit (1–200, default 50) and cursor, and returns `{links, next}`.", "pagination", "src/server.ts", "router.get"),
  },
  { user: "Update the tests for pagination.", steps: [step([write("test/pagination.test.ts", PAGINATION_TEST)])], answer: answer("Added test/pagination.test.ts, skipped for now since it needs a running server.", "pagination tests", "test/pagination.test.ts", "fetch") },
  { user: "Set now: preparing the v0.3 release notes.", steps: [step([memory("set_now", { now: "Preparing the v0.3 release notes" })])], answer: answer("Set now to the release notes.", "the release", "CHANGELOG.md", "release") },
  { user: "Draft the release notes for v0.3 in CHANGELOG.md.", steps: [step([write("CHANGELOG.md", CHANGELOG)])], answer: answer("Drafted CHANGELOG.md for v0.3.", "the release", "CHANGELOG.md", "release") },
  {
    user: "Before I go: which port does the dev server use, what did we decide about storage, what is our testing convention, and what is still blocked?",
    steps: [],
    answer: answer("From the working state: the dev server runs on port 4173; links are stored in SQLite via bun:sqlite; tests use bun test with one file per module and no network; the auth refactor is blocked on the security review.", "the session so far", "VALARMIND.md", "state"),
  },
];
