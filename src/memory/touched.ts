/**
 * Files and symbols the session has touched (seed 002's entity workspace): each with how often it
 * was mentioned, read or edited and when last, so the prompt can remind the model what "it" and
 * "that file" refer to. Observed from user text (paths and `backticked` identifiers) and from
 * the paths each tool call declares it touches (edits where it writes).
 */
import { factsOfRecordedCall } from "../tools/call-facts.ts";
import { normalizeWorkspacePath } from "../tools/workspace-path.ts";
import type { ToolLocation } from "../tools/types.ts";

export type EntityKind = "file" | "symbol";

export interface TouchedEntity {
  name: string;
  kind: EntityKind;
  mentions: number;
  reads: number;
  edits: number;
  firstTurn: number;
  lastTurn: number;
}

export type TouchKind = "mention" | "read" | "edit";

// Free text names a file when a word has a known extension (src/a.ts, README.md) or is an explicit
// relative path (./scripts, ../lib/); prose like "e.g." or "and/or" does not.
const EXTENSIONS =
  "ts|tsx|js|jsx|mjs|cjs|json|jsonl|md|mdx|py|rs|go|java|kt|c|h|cc|cpp|hpp|cs|rb|php|sh|bash|zsh|yml|yaml|toml|lock|txt|css|scss|html|sql|swift|vue|svelte|xml|ini|cfg|env|gradle|lua|zig|ex|exs|dart|scala|proto|graphql|csv|toon";
const FILE_WORD = new RegExp(String.raw`(?<![\w@/.-])(?:\.{1,2}/)?(?:[\w@.-]+/)*[\w@-][\w@.-]*\.(?:${EXTENSIONS})(?![\w/-]|\.\w)`, "g");
const RELATIVE_PATH = /(?<![\w@/.-])\.{1,2}\/[\w@./-]+/g;
const URL = /\b[a-z][a-z0-9+.-]*:\/\/\S+/gi;
const BACKTICK_SYMBOL = new RegExp(String.raw`\x60([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)(?:\(\))?\x60`, "g");
const HAS_EXTENSION = new RegExp(String.raw`\.(?:${EXTENSIONS})$`);

function normalizePath(path: string): string {
  return path.replace(/^\.\//, "").replace(/\/+$/, "");
}

export class TouchedEntities {
  private entities = new Map<string, TouchedEntity>();

  /** `root`: the workspace, so a file named by its absolute path is the same entity as by its relative one. */
  constructor(private readonly root?: string) {}

  private touch(kind: EntityKind, name: string, how: TouchKind, turn: number): void {
    const key = `${kind}:${name}`;
    const entity = this.entities.get(key) ?? { name, kind, mentions: 0, reads: 0, edits: 0, firstTurn: turn, lastTurn: turn };
    if (how === "mention") entity.mentions += 1;
    if (how === "read") entity.reads += 1;
    if (how === "edit") entity.edits += 1;
    entity.lastTurn = Math.max(entity.lastTurn, turn);
    this.entities.set(key, entity);
  }

  touchFile(path: string, how: TouchKind, turn: number): void {
    const name = normalizePath(path.trim());
    if (name !== "" && !name.includes("\n")) this.touch("file", name, how, turn);
  }

  mentionSymbol(name: string, turn: number): void {
    this.touch("symbol", name, "mention", turn);
  }

  /** Paths and `backticked` identifiers in free text count as mentions. */
  observeText(text: string, turn: number): void {
    const prose = text.replace(URL, " ");
    const files = new Set([...prose.matchAll(FILE_WORD), ...prose.matchAll(RELATIVE_PATH)].map((m) => normalizePath(m[0])));
    for (const file of files) this.touchFile(file, "mention", turn);
    for (const match of prose.matchAll(BACKTICK_SYMBOL)) {
      const name = match[1];
      if (name && !HAS_EXTENSION.test(name)) this.mentionSymbol(name, turn);
    }
  }

  /** The paths a call touches: written ones are edits, the rest reads. */
  observeLocations(locations: readonly ToolLocation[], turn: number): void {
    for (const location of locations) this.touchFile(normalizeWorkspacePath(location.path, this.root), location.access === "write" ? "edit" : "read", turn);
  }

  /** A recorded call (name and argument JSON) touches what its tool declares; unknown tools and invalid arguments touch nothing. */
  observeToolCall(toolName: string, argumentsJson: string, turn: number): void {
    this.observeLocations(factsOfRecordedCall(toolName, argumentsJson)?.locations ?? [], turn);
  }

  /** Most relevant first: edited, then most touched, then most recent. */
  list(kind: EntityKind, limit = Infinity): TouchedEntity[] {
    return [...this.entities.values()]
      .filter((e) => e.kind === kind)
      .sort(
        (a, b) =>
          Number(b.edits > 0) - Number(a.edits > 0) ||
          b.mentions + b.reads + b.edits - (a.mentions + a.reads + a.edits) ||
          b.lastTurn - a.lastTurn ||
          a.name.localeCompare(b.name),
      )
      .slice(0, limit);
  }

  /** Files touched in or after `sinceTurn` (the current task's files). */
  recentFiles(sinceTurn: number): string[] {
    return this.list("file").filter((e) => e.lastTurn >= sinceTurn).map((e) => e.name);
  }

  get size(): number {
    return this.entities.size;
  }

  snapshot(): TouchedEntity[] {
    return [...this.entities.values()].map((e) => ({ ...e }));
  }

  restore(entities: readonly TouchedEntity[]): void {
    this.entities = new Map(entities.map((e) => [`${e.kind}:${e.name}`, { ...e }]));
  }
}
