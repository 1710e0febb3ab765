/**
 * The repository the scripted 40-turn benchmark session (bench/agent.bench.ts) works in: a small
 * URL-shortener service on Bun, with real-looking sources, tests, a filled-in VALARMIND.md and a
 * README, committed to git. The scripted tool calls read, grep and edit these exact texts.
 */

const SERVER = `import { loadConfig } from "./config.ts";
import { createRouter } from "./router.ts";
import { MapLinkStore } from "./links.ts";
import { requireSession } from "./auth.ts";

/**
 * The HTTP entry point. Routes:
 *   GET  /:slug        redirect to the stored URL (302), 404 when unknown
 *   POST /links        create a short link from {"url": "..."}; 201 with {"slug", "url"}
 *   GET  /links        list links (newest first)
 *   GET  /healthz      liveness probe
 */
const config = loadConfig(process.env);
const store = new MapLinkStore();

const router = createRouter();

router.get("/healthz", () => new Response("ok"));

router.get("/links", async () => {
  const links = await store.list();
  return Response.json(links);
});

router.post("/links", async (req) => {
  const session = await requireSession(req, config);
  if (!session) return new Response("unauthorized", { status: 401 });
  let body: unknown;
  try {
    body = await req.json();
  } catch {
    return new Response("body must be JSON", { status: 400 });
  }
  const url = typeof body === "object" && body !== null && "url" in body ? String(body.url) : "";
  if (!/^https?:\\/\\//.test(url)) return new Response("url must start with http:// or https://", { status: 400 });
  const link = await store.put(url, session.user);
  return Response.json(link, { status: 201 });
});

router.get("/:slug", async (_req, params) => {
  const link = await store.get(params.slug ?? "");
  if (!link) return new Response("not found", { status: 404 });
  return Response.redirect(link.url, 302);
});

const server = Bun.serve({
  port: config.port,
  hostname: config.host,
  fetch: (req) => router.handle(req),
  error(error) {
    console.error("unhandled error", error);
    return new Response("internal error", { status: 500 });
  },
});

console.log(\`links service listening on http://\${server.hostname}:\${server.port}\`);
`;

const ROUTER = `/**
 * A tiny router: exact segments and ":param" segments, first match wins. No regexes, no
 * wildcards; enough for five routes and easy to test.
 */
export type Params = Record<string, string | undefined>;
export type Handler = (req: Request, params: Params) => Response | Promise<Response>;

interface Route {
  method: string;
  segments: string[];
  handler: Handler;
}

function split(path: string): string[] {
  return path.split("/").filter((s) => s !== "");
}

function match(route: Route, segments: string[]): Params | undefined {
  if (route.segments.length !== segments.length) return undefined;
  const params: Params = {};
  for (let i = 0; i < segments.length; i++) {
    const want = route.segments[i] ?? "";
    const got = segments[i] ?? "";
    if (want.startsWith(":")) params[want.slice(1)] = decodeURIComponent(got);
    else if (want !== got) return undefined;
  }
  return params;
}

export function createRouter() {
  const routes: Route[] = [];
  const add = (method: string) => (path: string, handler: Handler) => {
    routes.push({ method, segments: split(path), handler });
  };
  return {
    get: add("GET"),
    post: add("POST"),
    delete: add("DELETE"),
    async handle(req: Request): Promise<Response> {
      const url = new URL(req.url);
      const segments = split(url.pathname);
      let allowed = false;
      for (const route of routes) {
        const params = match(route, segments);
        if (!params) continue;
        if (route.method !== req.method) {
          allowed = true;
          continue;
        }
        return route.handler(req, params);
      }
      if (allowed) return new Response("method not allowed", { status: 405 });
      return new Response("not found", { status: 404 });
    },
  };
}
`;

const LINKS = `/**
 * Links and their slugs. A slug is SLUG_LENGTH characters from the base58 alphabet (no 0, O, I,
 * l), so it can be read aloud and typed from a screenshot.
 */
export const SLUG_ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
export const SLUG_LENGTH = 6;

export interface Link {
  slug: string;
  url: string;
  owner: string;
  createdAt: string;
  hits: number;
}

export function createSlug(random: () => number = Math.random): string {
  let slug = "";
  for (let i = 0; i < SLUG_LENGTH; i++) {
    slug += SLUG_ALPHABET[Math.floor(random() * SLUG_ALPHABET.length)];
  }
  return slug;
}

export interface LinkStore {
  get(slug: string): Promise<Link | undefined>;
  put(url: string, owner: string): Promise<Link>;
  list(): Promise<Link[]>;
}

/** The in-memory store used until the SQLite store lands. Lost on restart. */
export class MapLinkStore implements LinkStore {
  private readonly links = new Map<string, Link>();

  async get(slug: string): Promise<Link | undefined> {
    const link = this.links.get(slug);
    if (link) link.hits++;
    return link;
  }

  async put(url: string, owner: string): Promise<Link> {
    let slug = createSlug();
    // Collisions are rare (58^6 slugs) but possible: retry a few times.
    for (let attempt = 0; this.links.has(slug) && attempt < 5; attempt++) slug = createSlug();
    if (this.links.has(slug)) throw new Error("could not find a free slug after 5 attempts");
    const link: Link = { slug, url, owner, createdAt: new Date().toISOString(), hits: 0 };
    this.links.set(slug, link);
    return link;
  }

  async list(): Promise<Link[]> {
    return [...this.links.values()].sort((a, b) => b.createdAt.localeCompare(a.createdAt));
  }
}
`;

const DB = `/**
 * Database access. Written for Postgres first (see pg-style placeholders below); the SQLite
 * store will replace it.
 */
export interface DbConfig {
  url: string;
  poolSize: number;
}

export interface Row {
  [column: string]: unknown;
}

export interface Db {
  query<T extends Row>(sql: string, params?: unknown[]): Promise<T[]>;
  close(): Promise<void>;
}

// Postgres placeholders are $1, $2...; SQLite accepts ?1, ?2 as well, so the SQL can stay.
export const CREATE_LINKS = \`
  CREATE TABLE IF NOT EXISTS links (
    slug       TEXT PRIMARY KEY,
    url        TEXT NOT NULL,
    owner      TEXT NOT NULL,
    created_at TEXT NOT NULL,
    hits       INTEGER NOT NULL DEFAULT 0
  )\`;

export const SELECT_LINK = "SELECT slug, url, owner, created_at, hits FROM links WHERE slug = $1";
export const INSERT_LINK = "INSERT INTO links (slug, url, owner, created_at) VALUES ($1, $2, $3, $4)";
export const LIST_LINKS = "SELECT slug, url, owner, created_at, hits FROM links ORDER BY created_at DESC";

export function openDb(config: DbConfig): Db {
  throw new Error(\`no database driver configured for \${config.url}; the SQLite store is not written yet\`);
}
`;

const AUTH = `import type { Config } from "./config.ts";

/**
 * Sessions are bearer tokens in the Authorization header, looked up in a JSON file of
 * token -> user. Temporary: the plan is signed session cookies (blocked on the security review).
 */
export interface Session {
  user: string;
  token: string;
}

let tokens: Record<string, string> | undefined;

async function loadTokens(config: Config): Promise<Record<string, string>> {
  if (tokens) return tokens;
  const file = Bun.file(config.tokensFile);
  tokens = (await file.exists()) ? ((await file.json()) as Record<string, string>) : {};
  return tokens;
}

export async function requireSession(req: Request, config: Config): Promise<Session | undefined> {
  const header = req.headers.get("authorization") ?? "";
  const match = /^Bearer (\\S+)$/.exec(header);
  if (!match?.[1]) return undefined;
  const user = (await loadTokens(config))[match[1]];
  return user ? { user, token: match[1] } : undefined;
}
`;

const CONFIG = `export interface Config {
  port: number;
  host: string;
  tokensFile: string;
}

export function loadConfig(env: Record<string, string | undefined>): Config {
  const port = Number(env.PORT ?? 4173);
  if (!Number.isInteger(port) || port <= 0) throw new Error(\`PORT must be a positive integer, got \${env.PORT}\`);
  return {
    port,
    host: env.HOST ?? "127.0.0.1",
    tokensFile: env.TOKENS_FILE ?? "./data/tokens.json",
  };
}
`;

const ROUTER_TEST = `import { describe, expect, test } from "bun:test";
import { createRouter } from "../src/router.ts";

describe("router", () => {
  test("matches exact paths", async () => {
    const router = createRouter();
    router.get("/healthz", () => new Response("ok"));
    const res = await router.handle(new Request("http://x/healthz"));
    expect(await res.text()).toBe("ok");
  });

  test("passes :params", async () => {
    const router = createRouter();
    router.get("/:slug", (_req, params) => new Response(params.slug));
    const res = await router.handle(new Request("http://x/abc123"));
    expect(await res.text()).toBe("abc123");
  });

  test("405 for a known path with another method", async () => {
    const router = createRouter();
    router.get("/links", () => new Response("[]"));
    const res = await router.handle(new Request("http://x/links", { method: "PUT" }));
    expect(res.status).toBe(405);
  });
});
`;

const LINKS_TEST = `import { describe, expect, test } from "bun:test";
import { createSlug, MapLinkStore, SLUG_ALPHABET } from "../src/links.ts";

describe("slugs", () => {
  test("are 7 characters from the alphabet", () => {
    const slug = createSlug();
    expect(slug).toHaveLength(7);
    for (const ch of slug) expect(SLUG_ALPHABET).toContain(ch);
  });
});

describe("MapLinkStore", () => {
  test("put then get counts a hit", async () => {
    const store = new MapLinkStore();
    const link = await store.put("https://example.com", "ana");
    const again = await store.get(link.slug);
    expect(again?.hits).toBe(1);
  });

  test("list is newest first", async () => {
    const store = new MapLinkStore();
    await store.put("https://a.example", "ana");
    await store.put("https://b.example", "ana");
    const urls = (await store.list()).map((l) => l.url);
    expect(urls).toEqual(["https://b.example", "https://a.example"]);
  });
});
`;

const README = `# links

A small URL shortener on Bun. Short links are 6-character base58 slugs.

## Running

    bun install
    bun run dev        # http://localhost:4173
    bun test

Configuration comes from the environment: \`PORT\` (default 4173), \`HOST\` (default 127.0.0.1),
\`TOKENS_FILE\` (default ./data/tokens.json).

## API

- \`POST /links\` with \`{"url": "https://..."}\` and \`Authorization: Bearer <token>\` → 201 \`{"slug", "url"}\`
- \`GET /:slug\` → 302 to the URL, 404 when unknown
- \`GET /links\` → every link, newest first
- \`GET /healthz\` → ok

## Storage

Links are kept in memory and lost on restart. Postgres support is sketched in src/db.ts.

## Auth

Bearer tokens from a JSON file (token → user). Signed session cookies are planned.
`;

const VALARMIND = `# Project instructions for valarmind

## What this project is

\`links\` is a URL shortener served by Bun (src/server.ts). Small on purpose: no framework, a
hand-written router, one storage interface (LinkStore) with swappable implementations.

## How to build and test

- \`bun install\`, then \`bun run dev\` for the dev server and \`bun test\` for the tests.
- \`bun run typecheck\` must pass before a commit.

## Conventions

- TypeScript strict; no \`any\`. Small modules, one responsibility each.
- Errors returned to clients are plain text with the right status code.
- Keep dependencies at zero unless there is no reasonable alternative.

## Decisions

Architecture decisions live in \`docs/adr/\`.
`;

const HTML = `/**
 * The few HTML pages the service renders: the landing page with the shorten form, the page shown
 * for an unknown slug, and a generic error page. Plain template strings, escaped by hand.
 */
const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => ESCAPES[ch] ?? ch);
}

const STYLE = \`
  :root { --fg: #1d2433; --muted: #5b6577; --accent: #2f6fed; --bg: #f7f8fa; }
  * { box-sizing: border-box; }
  body { margin: 0; font: 16px/1.5 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
  main { max-width: 36rem; margin: 4rem auto; padding: 0 1rem; }
  h1 { font-size: 1.6rem; margin: 0 0 1rem; }
  p.muted { color: var(--muted); }
  form { display: flex; gap: 0.5rem; }
  input[type=url] { flex: 1; padding: 0.6rem 0.8rem; border: 1px solid #c9cfda; border-radius: 6px; }
  button { padding: 0.6rem 1rem; border: 0; border-radius: 6px; background: var(--accent); color: white; cursor: pointer; }
  button:disabled { opacity: 0.6; cursor: default; }
  .result { margin-top: 1.5rem; padding: 1rem; background: white; border: 1px solid #e3e7ee; border-radius: 6px; }
  .result a { font-family: ui-monospace, monospace; }
  footer { margin-top: 3rem; font-size: 0.85rem; color: var(--muted); }
\`;

// TODO(#12): dark mode once the design team settles the palette.
function page(title: string, body: string): string {
  return \`<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>\${escapeHtml(title)} · links</title>
  <style>\${STYLE}</style>
</head>
<body>
  <main>
\${body}
    <footer>links — a small URL shortener. <a href="/links">All links</a></footer>
  </main>
</body>
</html>\`;
}

export function landingPage(): string {
  return page(
    "Shorten a link",
    \`    <h1>Shorten a link</h1>
    <p class="muted">Paste a URL starting with http:// or https://. You need a token from your team lead.</p>
    <form id="shorten">
      <input type="url" name="url" placeholder="https://example.com/a/long/path" required>
      <button type="submit">Shorten</button>
    </form>
    <div class="result" id="result" hidden></div>
    <script>
      const form = document.getElementById("shorten");
      const result = document.getElementById("result");
      form.addEventListener("submit", async (event) => {
        event.preventDefault();
        const button = form.querySelector("button");
        button.disabled = true;
        try {
          const token = localStorage.getItem("links-token") ?? prompt("Your token");
          if (!token) return;
          localStorage.setItem("links-token", token);
          const res = await fetch("/links", {
            method: "POST",
            headers: { "content-type": "application/json", authorization: "Bearer " + token },
            body: JSON.stringify({ url: form.url.value }),
          });
          if (!res.ok) {
            result.textContent = "Error " + res.status + ": " + (await res.text());
          } else {
            const link = await res.json();
            const short = location.origin + "/" + link.slug;
            result.innerHTML = '<a href="' + short + '">' + short + "</a>";
          }
          result.hidden = false;
        } finally {
          button.disabled = false;
        }
      });
    </script>\`,
  );
}

export function notFoundPage(slug: string): string {
  return page(
    "Link not found",
    \`    <h1>Link not found</h1>
    <p>There is no link <code>\${escapeHtml(slug)}</code>. It may have been mistyped — slugs never contain 0, O, I or l.</p>
    <p><a href="/">Shorten a new link</a></p>\`,
  );
}

export function errorPage(status: number, message: string): string {
  return page(
    \`Error \${status}\`,
    \`    <h1>Something went wrong (\${status})</h1>
    <p>\${escapeHtml(message)}</p>
    <p class="muted">If this keeps happening, tell the #links channel and include the time of the error.</p>\`,
  );
}
`;

const API_DOC = `# links HTTP API

All responses are JSON unless noted. Errors are plain text with a meaningful status code.
Authentication: \`Authorization: Bearer <token>\`; tokens are issued by the team lead and live in
\`TOKENS_FILE\`.

## POST /links

Create a short link.

Request body:

    { "url": "https://example.com/some/long/path?with=query" }

Rules:

- \`url\` must start with \`http://\` or \`https://\`; anything else is a 400.
- The body must be JSON; anything else is a 400 with "body must be JSON".
- Without a valid token the answer is 401 "unauthorized".

Response, 201:

    {
      "slug": "k3QmZp",
      "url": "https://example.com/some/long/path?with=query",
      "owner": "ana",
      "createdAt": "2026-01-31T12:00:00.000Z",
      "hits": 0
    }

Example:

    curl -s -X POST http://localhost:4173/links \\\\
      -H 'authorization: Bearer dev-token' \\\\
      -H 'content-type: application/json' \\\\
      -d '{"url": "https://bun.sh/docs"}'

## GET /:slug

Redirects (302) to the stored URL and counts a hit. Unknown slugs answer 404 "not found".
Slugs are case-sensitive.

    curl -si http://localhost:4173/k3QmZp | head -3
    HTTP/1.1 302 Found
    location: https://bun.sh/docs

## GET /links

Every link, newest first:

    [
      { "slug": "k3QmZp", "url": "https://bun.sh/docs", "owner": "ana", "createdAt": "...", "hits": 3 },
      { "slug": "Xy7Pq2", "url": "https://example.com", "owner": "ben", "createdAt": "...", "hits": 0 }
    ]

There is no pagination yet; with a few hundred links that is fine.

## GET /healthz

Answers 200 "ok" when the process is up. It does not check the store.

## Status codes

| status | when |
|---|---|
| 200 | GET /links, GET /healthz |
| 201 | POST /links created a link |
| 302 | GET /:slug found the link |
| 400 | bad JSON or a URL without http(s):// |
| 401 | missing or unknown token |
| 404 | unknown slug or path |
| 405 | known path, wrong method |
| 500 | anything unexpected (logged with the stack on the server) |

## Limits

- URLs up to 2048 characters; longer ones are rejected with 400 (not enforced yet, see the tasks).
- Slugs are drawn at random; the chance of a collision with 100 000 links is below one in a million
  per insert, and inserts retry five times.

## Versioning

The API is unversioned while the service is internal. Breaking changes are announced in
CHANGELOG.md and in the #links channel a week ahead.
`;

const PACKAGE = `{
  "name": "links",
  "version": "0.2.0",
  "private": true,
  "type": "module",
  "scripts": {
    "dev": "bun --watch src/server.ts",
    "start": "bun src/server.ts",
    "test": "bun test",
    "typecheck": "tsc --noEmit"
  },
  "devDependencies": {
    "@types/bun": "^1.1.0",
    "typescript": "^5.6.0"
  }
}
`;

export const BENCH_FILES: Record<string, string> = {
  "package.json": PACKAGE,
  "README.md": README,
  "VALARMIND.md": VALARMIND,
  ".gitignore": "node_modules/\ndata/\n.valarmind/\nVALARMIND.local.md\n",
  "src/server.ts": SERVER,
  "src/router.ts": ROUTER,
  "src/links.ts": LINKS,
  "src/db.ts": DB,
  "src/auth.ts": AUTH,
  "src/config.ts": CONFIG,
  "src/html.ts": HTML,
  "docs/api.md": API_DOC,
  "test/router.test.ts": ROUTER_TEST,
  "test/links.test.ts": LINKS_TEST,
};
