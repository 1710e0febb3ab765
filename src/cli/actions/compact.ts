/**
 * `valarmind compact`: state.json → projection → TOON (round trip checked) → state.toon (atomic,
 * written only when it changed), with exact token counts of the JSON (pretty and compact) and
 * the TOON. `--check` writes nothing and exits 1 when state.toon is missing or stale.
 */
import { relative } from "node:path";
import { findWorkspaceRoot, workspacePaths } from "../../config/paths.ts";
import { ensureValarmindDir } from "../../config/valarmind-dir.ts";
import { ValarmindError } from "../../errors.ts";
import { countTokens, tokenizerInfo } from "../../tokens/tokenizer.ts";
import { STATE_TOKEN_FLOOR } from "../../state/projection.ts";
import { serializeState } from "../../state/store.ts";
import { createStateStore } from "../../store/create-state-store.ts";
import { requireValidState } from "./require-valid-state.ts";
import { syncStateToon } from "../../state/state-toon-file.ts";
import { formatCompactReport, type CompactReport } from "./compact-report.ts";
import { terminalSafe, terminalSafeDeep } from "../../ui/terminal-safe-text.ts";
import { jsonForTerminal } from "../../ui/print-json.ts";

export interface CompactOptions {
  json: boolean;
  check: boolean;
  maxTokens: number;
}

/** Returns the exit code: 0, or 1 when `--check` finds state.toon missing or stale. */
export async function runCompact(options: CompactOptions): Promise<number> {
  const paths = workspacePaths(findWorkspaceRoot());
  const read = await createStateStore(paths).read();
  requireValidState(read);
  for (const notice of read.notices) process.stderr.write(`valarmind: ${terminalSafe(notice)}\n`);
  if (read.source === "missing") {
    throw new ValarmindError(`no working state at ${paths.stateJson}`, { hint: "Run 'valarmind init' first." });
  }
  // Refuses a .valarmind (or memory/) that is a symlink, as every command that writes there does.
  if (!options.check) ensureValarmindDir(paths, paths.memoryDir);
  const { encoded, status } = await syncStateToon(paths.stateToon, read.state, {
    maxTokens: options.maxTokens,
    check: options.check,
    accept: (projection) => {
      if (projection.tokens <= options.maxTokens) return;
      throw new ValarmindError(
        `the working state does not fit ${options.maxTokens} tokens even with every optional item left out (${projection.tokens} tokens)`,
        { hint: "Shorten the goal and 'now', or raise --max-tokens." },
      );
    },
  });

  const pretty = read.raw ?? serializeState(read.state);
  const [prettyTokens, compactTokens] = await Promise.all([countTokens(pretty), countTokens(JSON.stringify(read.state))]);
  const tokenizer = tokenizerInfo();
  const report: CompactReport = {
    state_file: relative(process.cwd(), paths.stateJson) || paths.stateJson,
    toon_file: relative(process.cwd(), paths.stateToon) || paths.stateToon,
    mode: options.check ? "check" : "write",
    toon_status: options.check ? status : status === "fresh" ? "unchanged" : "written",
    tokens: { json_pretty: prettyTokens, json_compact: compactTokens, toon: encoded.tokens },
    toon_vs_compact_json: compactTokens === 0 ? 0 : Math.round((encoded.tokens / compactTokens) * 1000) / 1000,
    cap: options.maxTokens,
    floor: STATE_TOKEN_FLOOR,
    band: encoded.tokens < STATE_TOKEN_FLOOR ? "below-floor" : "within",
    omitted: encoded.omitted,
    tokenizer: tokenizer ? { origin: tokenizer.origin, load_ms: Math.round(tokenizer.loadMs * 10) / 10 } : undefined,
  };
  // Omitted ids and paths come from state.json (the model and a cloned repository write it): inert before the report adds colour.
  process.stdout.write(options.json ? `${jsonForTerminal(report, 2)}\n` : formatCompactReport(terminalSafeDeep(report)));
  if (tokenizer?.cacheError) {
    process.stderr.write(`valarmind: could not cache the tokenizer table at ${tokenizer.cachePath} (${tokenizer.cacheError}); counts are exact but the next run builds it again\n`);
  }
  return options.check && status !== "fresh" ? 1 : 0;
}
