/**
 * Text for the scripted benchmark session: assistant answers of a few hundred tokens (a specific
 * opening written per turn, then deterministic, varied elaboration — no two answers alike, so
 * nothing is deduplicated by accident), pasted logs, and the files the model writes.
 */

function rng(seed: number): () => number {
  let s = (seed * 2654435761) >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return ((s >>> 0) % 10_000) / 10_000;
  };
}

function pick<T>(list: readonly T[], r: () => number): T {
  const item = list[Math.floor(r() * list.length)];
  if (item === undefined) throw new Error("pick from an empty list");
  return item;
}

const OBSERVATIONS = [
  "The handler in {file} keeps the happy path short and returns early on every error, which makes the status codes easy to audit.",
  "Nothing in {file} touches global state except the module-level store, so swapping the implementation later stays a one-line change.",
  "{fn} is only called from two places, and both already pass their own inputs, so changing its signature is cheap right now.",
  "The tests around {topic} exercise the common case but not the boundaries: an empty input, the maximum size and a duplicate are all missing.",
  "Error messages in {file} are plain text with the status code set explicitly, matching the convention in VALARMIND.md.",
  "There is no logging around {topic} beyond the unhandled-error hook in the server, so a failure here would only show up as a 500.",
  "The type of {fn}'s result is narrower than what callers assume; TypeScript catches it only because the project runs in strict mode.",
  "{file} reads its configuration once at start-up, so a change to the environment needs a restart — fine for this service.",
  "Concurrency is not an issue for {topic} today because Bun runs the handlers on one thread, but the SQLite store will need a transaction for the read-then-write.",
  "The naming in {file} is consistent: verbs for functions, nouns for types, and no abbreviations beyond `req` and `res`.",
];

const SUGGESTIONS = [
  "add a test that pins the current behaviour of {fn} before changing it",
  "move the magic numbers around {topic} into named constants next to their use",
  "return a 400 with a message that names the bad field instead of a bare status",
  "keep {file} free of I/O so it stays trivially testable",
  "document the behaviour of {fn} in one line above the function",
  "check the 404 and 405 paths together, since the router decides between them",
  "run `bun test` and `bun run typecheck` before committing, as the project instructions say",
  "prefer `Response.json` over building JSON strings by hand",
  "keep the public surface of {file} to the functions the server actually imports",
  "log the slug and the status code on errors, never the full URL with its query string",
];

const CLOSINGS = [
  "Tell me if you want me to go ahead with any of these.",
  "I can make that change next if it sounds right.",
  "None of this blocks the current task; it is worth a follow-up though.",
  "That is everything I found; the rest of the file looks fine.",
  "Let me know which of these you want first.",
];

const SNIPPETS = [
  "const limit = Math.min(Number(url.searchParams.get(\"limit\") ?? 50), 200);\nif (!Number.isInteger(limit) || limit < 1) return new Response(\"limit must be 1-200\", { status: 400 });",
  "const link = await store.get(slug);\nif (!link) return new Response(\"not found\", { status: 404 });\nreturn Response.redirect(link.url, 302);",
  "for (let attempt = 0; attempt < 5; attempt++) {\n  const slug = createSlug();\n  if (!(await store.get(slug))) return slug;\n}\nthrow new Error(\"no free slug after 5 attempts\");",
  "db.run(\"CREATE INDEX IF NOT EXISTS links_created_at ON links (created_at DESC)\");",
  "expect(res.status).toBe(404);\nexpect(await res.text()).toBe(\"not found\");",
];

export interface AnswerSpec {
  /** The turn-specific opening, written by hand. */
  lead: string;
  topic: string;
  file: string;
  fn: string;
}

/** A few hundred tokens: the lead, observations, suggestions, sometimes a snippet, a closing. */
export function answerText(turn: number, spec: AnswerSpec): string {
  const r = rng(turn + 17);
  const fill = (text: string) => text.replaceAll("{file}", spec.file).replaceAll("{fn}", spec.fn).replaceAll("{topic}", spec.topic);
  const observations = new Set<string>();
  const wanted = 3 + Math.floor(r() * 3);
  while (observations.size < wanted) observations.add(fill(pick(OBSERVATIONS, r)));
  const suggestions = new Set<string>();
  const bullets = 3 + Math.floor(r() * 3);
  while (suggestions.size < bullets) suggestions.add(fill(pick(SUGGESTIONS, r)));
  const parts = [spec.lead, "", [...observations].join(" "), "", "Next steps I would suggest:", ...[...suggestions].map((s) => `- ${s[0]?.toUpperCase()}${s.slice(1)}.`)];
  if (r() < 0.6) parts.push("", "For example:", "", "```ts", pick(SNIPPETS, r), "```");
  parts.push("", `(turn ${turn}) ${pick(CLOSINGS, r)}`);
  return parts.join("\n");
}

export const STACK_TRACE = `$ bun test test/links.test.ts
bun test v1.1.30

test/links.test.ts:
5 |   test("are 7 characters from the alphabet", () => {
6 |     const slug = createSlug();
7 |     expect(slug).toHaveLength(7);
                      ^
error: expect(received).toHaveLength(expected)

Expected length: 7
Received length: 6
Received: "k3QmZp"

      at <anonymous> (/home/dev/links/test/links.test.ts:7:18)
(fail) slugs > are 7 characters from the alphabet [0.41ms]
(pass) MapLinkStore > put then get counts a hit [0.12ms]
(pass) MapLinkStore > list is newest first [0.09ms]

 2 pass
 1 fail
 5 expect() calls
Ran 3 tests across 1 file. [18.00ms]`;

export const LOAD_TEST = `Summary:
  Total:        30.0021 secs
  Slowest:      0.4127 secs
  Fastest:      0.0009 secs
  Average:      0.0113 secs
  Requests/sec: 4411.2650

Response time histogram:
  0.001 [1]      |
  0.042 [130911] |■■■■■■■■■■■■■■■■■■■■■■■■■■■■■■■■■■■■■■■■
  0.083 [1204]   |
  0.125 [86]     |
  0.166 [31]     |
  0.207 [50]     |
  0.248 [12]     |
  0.413 [45]     |

Latency distribution:
  10% in 0.0041 secs
  50% in 0.0088 secs
  90% in 0.0172 secs
  99% in 0.0561 secs

Status code distribution:
  [201] 120113 responses
  [429] 12183 responses
  [500] 42 responses

Error distribution:
  [42] Post "http://127.0.0.1:4173/links": read: connection reset by peer`;

export const SQLITE_STORE = `import { Database } from "bun:sqlite";
import { CREATE_LINKS } from "../db.ts";
import { createSlug, type Link, type LinkStore } from "../links.ts";

interface LinkRow {
  slug: string;
  url: string;
  owner: string;
  created_at: string;
  hits: number;
}

function toLink(row: LinkRow): Link {
  return { slug: row.slug, url: row.url, owner: row.owner, createdAt: row.created_at, hits: row.hits };
}

/** Links in one SQLite file (bun:sqlite); see docs/adr for why not Postgres. */
export class SqliteLinkStore implements LinkStore {
  private readonly db: Database;

  constructor(path: string) {
    this.db = new Database(path, { create: true });
    this.db.run(CREATE_LINKS);
  }

  async get(slug: string): Promise<Link | undefined> {
    const row = this.db.query<LinkRow, [string]>("UPDATE links SET hits = hits + 1 WHERE slug = ?1 RETURNING *").get(slug);
    return row ? toLink(row) : undefined;
  }

  async put(url: string, owner: string): Promise<Link> {
    const insert = this.db.query("INSERT OR IGNORE INTO links (slug, url, owner, created_at) VALUES (?1, ?2, ?3, ?4)");
    for (let attempt = 0; attempt < 5; attempt++) {
      const link: Link = { slug: createSlug(), url, owner, createdAt: new Date().toISOString(), hits: 0 };
      if (insert.run(link.slug, link.url, link.owner, link.createdAt).changes === 1) return link;
    }
    throw new Error("could not find a free slug after 5 attempts");
  }

  async list(): Promise<Link[]> {
    return this.db.query<LinkRow, []>("SELECT * FROM links ORDER BY created_at DESC").all().map(toLink);
  }
}
`;

export const RATE_LIMIT = `/**
 * A token bucket per client key: \`capacity\` requests at once, refilled at \`refillPerSecond\`.
 * In memory; good enough for one process.
 */
export interface BucketOptions {
  capacity: number;
  refillPerSecond: number;
  now?: () => number;
}

export class TokenBucket {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private readonly now: () => number;

  constructor(private readonly options: BucketOptions) {
    this.now = options.now ?? Date.now;
  }

  /** Takes one token for \`key\`; false when the bucket is empty. */
  take(key: string): boolean {
    const now = this.now();
    const bucket = this.buckets.get(key) ?? { tokens: this.options.capacity, at: now };
    const refilled = Math.min(this.options.capacity, bucket.tokens + ((now - bucket.at) / 1000) * this.options.refillPerSecond);
    if (refilled < 1) {
      this.buckets.set(key, { tokens: refilled, at: now });
      return false;
    }
    this.buckets.set(key, { tokens: refilled - 1, at: now });
    return true;
  }
}
`;

export const RATE_LIMIT_TEST = `import { expect, test } from "bun:test";
import { TokenBucket } from "../src/ratelimit.ts";

test("allows the capacity, then refuses until refilled", () => {
  let now = 0;
  const bucket = new TokenBucket({ capacity: 2, refillPerSecond: 1, now: () => now });
  expect([bucket.take("a"), bucket.take("a"), bucket.take("a")]).toEqual([true, true, false]);
  now = 1000;
  expect(bucket.take("a")).toBe(true);
});

test("keys are independent", () => {
  const bucket = new TokenBucket({ capacity: 1, refillPerSecond: 1, now: () => 0 });
  expect(bucket.take("a")).toBe(true);
  expect(bucket.take("b")).toBe(true);
});
`;

export const PAGINATION_TEST = `import { expect, test } from "bun:test";

const base = "http://127.0.0.1:4173";

test.skip("GET /links?limit=2 returns two links and a cursor", async () => {
  const res = await fetch(\`\${base}/links?limit=2\`);
  const body = (await res.json()) as { links: unknown[]; next?: string };
  expect(body.links).toHaveLength(2);
  expect(typeof body.next).toBe("string");
});
`;

export const CHANGELOG = `# Changelog

## v0.3.0

- Links are stored in SQLite (bun:sqlite) at LINKS_DB (default ./data/links.sqlite) instead of memory.
- Slugs are 7 characters from the base58 alphabet.
- POST /links is rate limited per token (token bucket: 20 at once, 1 per second).
- GET /links is paginated: ?limit= (default 50, max 200) and ?cursor=.
- Schema migrations run at start-up (migrations table).
`;
