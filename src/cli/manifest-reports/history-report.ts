/** Reports over past manifests: the list of a session's calls, and the diff of two of them. */
import { basename } from "node:path";
import type { ManifestDiff } from "../../prompt/manifest-diff.ts";
import type { Manifest } from "../../prompt/manifest-schema.ts";
import { formatInt, padEnd, padStart, percent, type Paint } from "./text-style.ts";

export interface ListedManifest {
  path: string;
  manifest: Manifest;
}

export function callLabel(m: Manifest): string {
  return `turn ${m.turn}·${m.step}${m.purpose === "turn" ? "" : ` ${m.purpose}`}`;
}

/** A manifest file that could not be read: listed in its place, so the numbers stay those of --show. */
export interface DamagedManifest {
  path: string;
  problem: string;
}

export function formatManifestList(sessionId: string, dir: string, list: ReadonlyArray<ListedManifest | DamagedManifest>, paint: Paint): string {
  if (list.length === 0) return `session ${sessionId}: no manifests yet in ${dir} (each model call writes one)\n`;
  const out = [`${paint("bold", `session ${sessionId}`)} · ${list.length} manifest${list.length === 1 ? "" : "s"} in ${dir}`, ""];
  out.push(paint("dim", `  ${padStart("#", 3)}  ${padEnd("call", 16)}  ${padEnd("time", 8)}  ${padStart("total", 7)} / ${padEnd("budget", 7)}  ${padStart("stable", 6)}  ${padStart("cached", 6)}  cut`));
  list.forEach((entry, index) => {
    if (!("manifest" in entry)) {
      out.push(`  ${padStart(String(index + 1), 3)}  ${paint("yellow", "newer" in entry && entry.newer ? "newer version, skipped" : "damaged, skipped")}  ${paint("dim", basename(entry.path))} (valarmind prompt --show ${index + 1} says why)`);
      return;
    }
    const { path, manifest: m } = entry;
    const cached = m.usage ? percent(m.usage.cached, m.usage.input) : "–";
    const cut = m.cutoff_steps.length > 0 ? paint("yellow", m.cutoff_steps.map((s) => s.step).join(", ")) : "–";
    out.push(
      `  ${padStart(String(index + 1), 3)}  ${padEnd(callLabel(m), 16)}  ${m.timestamp.slice(11, 19)}  ${padStart(formatInt(m.total_tokens), 7)} / ${padEnd(formatInt(m.budget_tokens), 7)}  ${padStart(percent(m.stable_prefix_tokens, m.total_tokens), 6)}  ${padStart(cached, 6)}  ${cut}  ${paint("dim", basename(path))}`,
    );
  });
  out.push("", paint("dim", "show one: valarmind prompt --show N · compare: valarmind prompt --diff A B"));
  return `${out.join("\n")}\n`;
}

export function formatManifestDiff(a: ListedManifest, b: ListedManifest, diff: ManifestDiff, paint: Paint): string {
  const sign = (n: number) => (n > 0 ? `+${formatInt(n)}` : n < 0 ? `−${formatInt(-n)}` : "±0");
  const out = [
    `${paint("bold", "diff")} ${callLabel(a.manifest)} (${basename(a.path)}) → ${callLabel(b.manifest)} (${basename(b.path)})`,
    `total          ${formatInt(diff.totalBefore)} → ${formatInt(diff.totalAfter)} (${sign(diff.totalAfter - diff.totalBefore)})`,
    `stable prefix  ${formatInt(diff.stableBefore)} → ${formatInt(diff.stableAfter)}`,
    `unchanged prefix of B: ${formatInt(diff.unchangedPrefixTokens)} content tokens (${percent(diff.unchangedPrefixShare, 1, 1)}) — what a prefix cache can reuse`,
    "",
  ];
  if (diff.changes.length === 0) {
    out.push("no item changed");
  } else {
    for (const c of diff.changes) {
      const mark = c.change === "added" ? paint("green", "+") : c.change === "removed" ? paint("red", "−") : c.change === "moved" ? paint("yellow", "↕") : paint("yellow", "~");
      const tokens = c.change === "changed" ? `${formatInt(c.before)} → ${formatInt(c.after)}` : sign(c.after - c.before);
      out.push(`  ${mark} ${padEnd(c.id, 26)} ${padStart(tokens, 13)}  ${paint("dim", c.reason)}`);
    }
  }
  return `${out.join("\n")}\n`;
}
