/** `valarmind state show [--json|--toon|--all]`. Reading never writes: a bad file is reported (exit 2) and left. */
import { jsonForTerminal } from "../../ui/print-json.ts";
import { terminalSafe } from "../../ui/terminal-safe-text.ts";
import { relative } from "node:path";
import { findWorkspaceRoot, workspacePaths } from "../../config/paths.ts";
import { UsageError } from "../../errors.ts";
import { createStateStore } from "../../store/create-state-store.ts";
import { requireValidState } from "./require-valid-state.ts";
import { renderStateView, useColor } from "./state-view.ts";

export async function runStateShow(opts: { json?: boolean; toon?: boolean; all?: boolean }): Promise<void> {
  if (opts.json && opts.toon) throw new UsageError("--json and --toon cannot be used together");
  const paths = workspacePaths(findWorkspaceRoot());
  const store = createStateStore(paths);
  const read = await store.read();
  requireValidState(read);
  for (const notice of read.notices) process.stderr.write(`valarmind: ${terminalSafe(notice)}\n`);
  if (read.source === "missing") {
    process.stderr.write(`valarmind: no working state yet at ${store.location} (showing the empty state; 'valarmind init' sets up the workspace)\n`);
  }
  if (opts.json) {
    // serializeState's text, with DEL, C1 and bidi escaped too (it parses back the same).
    process.stdout.write(`${jsonForTerminal(read.state, 2)}\n`);
    return;
  }
  if (opts.toon) {
    const { encodeStateToon } = await import("../../state/toon.ts");
    const encoded = await encodeStateToon(read.state);
    process.stdout.write(`${process.stdout.isTTY ? terminalSafe(encoded.toon) : encoded.toon}\n`);
    if (encoded.omitted.length > 0) process.stderr.write(terminalSafe(`valarmind: left out to fit: ${encoded.omitted.join(", ")}\n`));
    return;
  }
  // The file's path for the file store; the server (without credentials) for a shared one.
  const source = store.location === paths.stateJson ? relative(process.cwd(), paths.stateJson) || paths.stateJson : store.location;
  process.stdout.write(renderStateView(read.state, { all: opts.all === true, color: useColor(process.stdout), source }));
}
