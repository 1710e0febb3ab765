/**
 * Comparing two manifests (`valarmind prompt --diff A B`): which items came, went, changed or
 * moved, and how much of B is an unchanged prefix of A — the part the provider's cache can reuse.
 */
import type { Manifest, ManifestItem } from "./manifest-schema.ts";

export interface ItemChange {
  id: string;
  /** "moved": the same item, at another place among the items both hold (the cached prefix breaks there). */
  change: "added" | "removed" | "changed" | "moved";
  before: number;
  after: number;
  reason: string;
}

export interface ManifestDiff {
  totalBefore: number;
  totalAfter: number;
  stableBefore: number;
  stableAfter: number;
  /** Content tokens at the start of B (in API order) whose items are identical, in order, to A's. */
  unchangedPrefixTokens: number;
  /** unchangedPrefixTokens / B's content tokens (total minus framing). */
  unchangedPrefixShare: number;
  changes: ItemChange[];
}

/** Content tokens of the items A and B share, in order, from the start (framing left out). */
export function unchangedPrefixTokens(a: readonly ManifestItem[], b: readonly ManifestItem[]): number {
  let tokens = 0;
  for (let i = 0; i < b.length; i++) {
    const x = a[i];
    const y = b[i];
    if (!x || !y || x.id !== y.id || x.hash !== y.hash) break;
    tokens += y.tokens;
  }
  return tokens;
}

export function diffManifests(a: Manifest, b: Manifest): ManifestDiff {
  const before = new Map(a.items.map((item) => [item.id, item]));
  const after = new Map(b.items.map((item) => [item.id, item]));
  const changes: ItemChange[] = [];
  for (const item of b.items) {
    const old = before.get(item.id);
    if (!old) changes.push({ id: item.id, change: "added", before: 0, after: item.tokens, reason: item.detail ?? item.reason });
    else if (old.hash !== item.hash) changes.push({ id: item.id, change: "changed", before: old.tokens, after: item.tokens, reason: item.detail ?? item.reason });
  }
  for (const item of a.items) {
    if (after.has(item.id)) continue;
    const why = b.dropped.find((d) => d.id === item.id);
    changes.push({ id: item.id, change: "removed", before: item.tokens, after: 0, reason: why ? `${why.reason}${why.detail ? `: ${why.detail}` : ""}` : "not in B" });
  }
  // The items both hold, unchanged, in each one's order: where the orders differ, items moved.
  const kept = (items: readonly ManifestItem[], other: Map<string, ManifestItem>) => items.filter((item) => other.get(item.id)?.hash === item.hash).map((item) => item.id);
  const orderA = kept(a.items, after);
  const orderB = kept(b.items, before);
  orderB.forEach((id, i) => {
    const item = after.get(id);
    if (item && orderA[i] !== id) changes.push({ id, change: "moved", before: item.tokens, after: item.tokens, reason: `was #${orderA.indexOf(id) + 1} of the items both hold, now #${i + 1}` });
  });
  const prefix = unchangedPrefixTokens(a.items, b.items);
  const content = b.total_tokens - b.framing_tokens;
  return {
    totalBefore: a.total_tokens,
    totalAfter: b.total_tokens,
    stableBefore: a.stable_prefix_tokens,
    stableAfter: b.stable_prefix_tokens,
    unchangedPrefixTokens: prefix,
    unchangedPrefixShare: content === 0 ? 0 : prefix / content,
    changes,
  };
}
