/** The report `valarmind compact` prints (and its `--json` shape). */
export interface CompactReport {
  state_file: string;
  toon_file: string;
  mode: "write" | "check";
  /** write mode: written | unchanged; check mode: fresh | stale | missing. */
  toon_status: "written" | "unchanged" | "fresh" | "stale" | "missing";
  tokens: { json_pretty: number; json_compact: number; toon: number };
  toon_vs_compact_json: number;
  cap: number;
  floor: number;
  /** `below-floor`: a near-empty state; nothing is padded to reach the floor. */
  band: "within" | "below-floor";
  omitted: string[];
  tokenizer: { origin: string; load_ms: number } | undefined;
}

export function formatCompactReport(r: CompactReport): string {
  const lines: string[] = [];
  const status: Record<CompactReport["toon_status"], string> = {
    written: `wrote ${r.toon_file}`,
    unchanged: `${r.toon_file} already up to date`,
    fresh: `${r.toon_file} is up to date`,
    stale: `${r.toon_file} is stale: run 'valarmind compact'`,
    missing: `${r.toon_file} is missing: run 'valarmind compact'`,
  };
  lines.push(status[r.toon_status]);
  const rows: [string, number, string][] = [
    [`${r.state_file} (pretty)`, r.tokens.json_pretty, ""],
    [`${r.state_file} (compact)`, r.tokens.json_compact, ""],
    [`${r.toon_file} (projection)`, r.tokens.toon, `  ${r.toon_vs_compact_json}× compact JSON; round trip checked`],
  ];
  const width = Math.max(...rows.map(([label]) => label.length));
  lines.push("tokens (o200k, exact):");
  for (const [label, n, note] of rows) lines.push(`  ${label.padEnd(width)} ${String(n).padStart(6)}${note}`);
  if (r.band === "below-floor") {
    lines.push(`  below the ${r.floor}-token floor: the state is near-empty; nothing is padded`);
  } else {
    lines.push(`  within the ${r.floor}–${r.cap} token band`);
  }
  if (r.omitted.length === 0) lines.push(`left out to fit ${r.cap} tokens: nothing`);
  else lines.push(`left out to fit ${r.cap} tokens (${r.omitted.length}): ${r.omitted.join(", ")}`);
  return `${lines.join("\n")}\n`;
}
