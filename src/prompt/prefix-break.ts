/**
 * Where a request stops repeating the previous one (issue 12). The provider caches the longest
 * prefix a request shares with an earlier one; valarmind builds each request to append to the
 * last, so the interesting event is a *break*: the first piece that differs from the previous
 * request of the session (a fold rewrote the summary, the state snapshot was refreshed, a turn
 * left the window…). Each manifest records it with the cached tokens it predicts; the usage
 * recorded after the call says how right that was.
 *
 *   const built = await buildRequest({ ..., previous: tracker.previous });
 *   tracker.remember(built.prefix);           // what the next request is compared with
 *   built.manifest.prefix                     // { kind: "append" | "break" | "first", ... }
 */
import type { ManifestPrefix } from "./manifest-schema.ts";
import type { RenderedPiece } from "./render-pass.ts";

export interface PrefixPiece {
  id: string;
  region: string;
  /** The piece as it goes on the wire (what the cache compares). */
  wire: string;
  tokens: number;
}

export interface PrefixSnapshot {
  /** "turn 12 step 2", "summary at turn 12". */
  label: string;
  pieces: PrefixPiece[];
}

/** The last request of a session (turn or fold: they share the cache), held by the session. */
export interface PrefixTracker {
  previous: PrefixSnapshot | undefined;
}

const INSTRUCTION_REGIONS = new Set(["core", "user", "agents", "project", "personal"]);

/** Regions that belong to one turn only: a request that differs from the previous one there did not break its history. */
const PER_TURN_REGIONS = new Set(["task", "state_changes", "context", "steps", "fold", "evicted", "summary_rules"]);

/** An image stands in by its hash: its data URL is megabytes the comparison need not count. */
function imageMarks(pieces: readonly RenderedPiece[]): string {
  return pieces.flatMap((p) => p.images ?? []).map((image) => `[image ${Bun.hash(image.image_url).toString(36)}]`).join("");
}

export function prefixPieces(pieces: readonly RenderedPiece[]): PrefixPiece[] {
  const out: PrefixPiece[] = [];
  for (let i = 0; i < pieces.length; i++) {
    const p = pieces[i];
    if (!p) continue;
    if (p.placement === "message" && p.group !== undefined) {
      // The user's message and its attachments are one message item on the wire: compare them as
      // that item, in the form the window gives the turn once it has entered it.
      const group: RenderedPiece[] = [];
      for (let next = pieces[i]; next?.placement === "message" && next.group === p.group; next = pieces[i + group.length]) group.push(next);
      i += group.length - 1;
      const content = group.map((g) => g.text ?? "").join("");
      out.push({ id: p.id, region: p.region, wire: JSON.stringify({ type: "message", role: p.role ?? "user", content }) + imageMarks(group), tokens: group.reduce((n, g) => n + g.tokens, 0) });
      continue;
    }
    out.push({ id: p.id, region: p.region, wire: p.items ? p.items.map((item) => JSON.stringify(item)).join("\n") : (p.text ?? "") + imageMarks([p]), tokens: p.tokens });
  }
  return out;
}

function commonPrefixLength(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

function breakReason(was: PrefixPiece, now: PrefixPiece): string {
  if (now.region === "tools") return "the tool list changed";
  if (INSTRUCTION_REGIONS.has(now.region)) return "the instructions changed (core rules, AGENTS.md or CLAUDE.md, VALARMIND.md or VALARMIND.local.md)";
  if (now.region === "summary" || was.region === "summary") return "the rolling summary changed: turns were folded into it";
  if (now.region === "state" || was.region === "state") return "the state snapshot was refreshed";
  if (now.region === "conversation" && was.region === "conversation") {
    return was.id === now.id ? `${now.id.replace(":", " ")} was rendered differently` : `the window changed: ${was.id.replace(":", " ")} is no longer where it was (folded out of the window)`;
  }
  return `${was.id} (${was.region}) became ${now.id} (${now.region})`;
}

/** Cached tokens the provider's rule gives a prefix of `tokens`: none below 1024, then in steps of 128. */
export function cacheableTokens(tokens: number): number {
  return tokens >= 1024 ? Math.floor(tokens / 128) * 128 : 0;
}

export function comparePrefix(previous: PrefixSnapshot | undefined, current: readonly PrefixPiece[], count: (text: string) => number): ManifestPrefix {
  if (!previous) return { kind: "first", compared_with: "none (the first request of this process)", reused_tokens: 0, predicted_cached_tokens: 0 };
  let reused = 0;
  for (const [i, now] of current.entries()) {
    const was = previous.pieces[i];
    if (was && was.wire === now.wire) {
      reused += now.tokens;
      continue;
    }
    if (!was) break;
    const shared = commonPrefixLength(was.wire, now.wire);
    if (shared > 0) reused += count(now.wire.slice(0, shared));
    const appended = PER_TURN_REGIONS.has(was.region);
    return {
      kind: appended ? "append" : "break",
      compared_with: previous.label,
      reused_tokens: reused,
      predicted_cached_tokens: cacheableTokens(reused),
      ...(!appended && { first_changed: { id: now.id, region: now.region, previous_id: was.id, reason: breakReason(was, now) } }),
    };
  }
  return { kind: "append", compared_with: previous.label, reused_tokens: reused, predicted_cached_tokens: cacheableTokens(reused) };
}
