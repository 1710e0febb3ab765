/**
 * `valarmind prompt`: build the next request offline and report it (`--dry-run`, the default),
 * or inspect past manifests (`--list`, `--show N`, `--diff A B`). Never sends a turn; `--tokens
 * api` only asks the API to count the request's input tokens. Manifests and requests carry text
 * a repository and the model wrote (file names, details, contents): the reports clean it for the
 * terminal before adding their own colour, and the JSON forms escape what a terminal would act on.
 */
import { basename, relative } from "node:path";
import { decideTrust, ignoredSettingsMessage } from "../actions/workspace-trust.ts";
import { headlessMessage } from "../actions/headless-message.ts";
import { stdinWaitMs } from "../piped-input.ts";
import { findWorkspaceRoot, workspacePaths, type WorkspacePaths } from "../../config/paths.ts";
import { resolveSettings } from "../../config/load-settings.ts";
import type { Settings } from "../../config/settings-schema.ts";
import { UsageError, ValarmindError } from "../../errors.ts";
import type { FunctionToolSpec } from "../../model/types.ts";
import { diffManifests } from "../../prompt/manifest-diff.ts";
import { readManifestEntries, type ManifestEntry } from "../../prompt/manifest.ts";
import { buildNextRequest } from "../../prompt/next-request.ts";
import { findSession, latestSession, type SessionRef } from "../../session/transcript.ts";
import { formatManifestDiff, formatManifestList, type ListedManifest } from "./history-report.ts";
import { formatManifestReport } from "./manifest-report.ts";
import { colorEnabled, makePaint } from "./text-style.ts";
import { terminalSafe, terminalSafeDeep, terminalSafeRowsDeep } from "../../ui/terminal-safe-text.ts";
import { jsonForTerminal } from "../../ui/print-json.ts";

export interface PromptOptions {
  message: string | undefined;
  json: boolean;
  showPrompt: boolean;
  list: boolean;
  show: string | undefined;
  diff: string[] | undefined;
  session: string | undefined;
  budget: number | undefined;
  tokens: "local" | "api";
  all: boolean;
  /** False with --no-context-files. */
  contextFiles?: boolean;
}

function write(text: string): void {
  process.stdout.write(text);
}

/** The tool definitions a real turn would send: the registry's specs. */
async function loadToolSpecs(settings: Settings): Promise<FunctionToolSpec[]> {
  const { toolSpecs } = await import("../../tools/registry.ts");
  return toolSpecs(settings);
}

async function dryRun(paths: WorkspacePaths, settings: Settings, opts: PromptOptions, settingsNotes: string[]): Promise<number> {
  const tools = await loadToolSpecs(settings);
  // As chat -p would send it: what a pipe holds appended, a custom command's expanded text (the same trust rules).
  const called = opts.message === undefined ? undefined : await headlessMessage(paths.root, undefined, opts.message, stdinWaitMs(process.env));
  const next = await buildNextRequest({
    paths,
    settings,
    ...(called !== undefined && { message: called.text }),
    ...(opts.session !== undefined && { session: opts.session }),
    ...(opts.budget !== undefined && { budgetTokens: opts.budget }),
    ...(opts.contextFiles === false && { contextFiles: false }),
    tools,
  });
  const manifest = next.manifest;
  const notes = [...settingsNotes, ...(called?.notices ?? []), ...next.notices];
  // The machine-readable forms keep stdout to themselves: their notes go to stderr.
  if (opts.json || opts.showPrompt) for (const note of notes) process.stderr.write(terminalSafe(`valarmind: ${note}\n`));
  if (opts.tokens === "api") {
    const { createModelClient } = await import("../../model/client-factory.ts");
    manifest.api_input_tokens = await createModelClient({ settings }).countInputTokens(next.request);
  }
  if (opts.showPrompt && opts.json) {
    write(`${jsonForTerminal({ manifest, request: next.request }, 2)}\n`);
  } else if (opts.showPrompt) {
    write(`${jsonForTerminal(next.request, 2)}\n`);
  } else if (opts.json) {
    write(`${jsonForTerminal(manifest, 2)}\n`);
  } else {
    notes.push(`token counts are exact o200k counts of each piece; the framing row estimates role markers${opts.tokens === "api" ? "" : " (--tokens api asks the API)"}`);
    write(formatManifestReport(terminalSafeRowsDeep(manifest), { paint: makePaint(colorEnabled()), title: "dry run — built offline, nothing sent or written", all: opts.all, notes: terminalSafeDeep(notes) }));
  }
  return 0;
}

function sessionFor(paths: WorkspacePaths, id: string | undefined): SessionRef {
  const ref = id ? findSession(paths, id) : latestSession(paths);
  if (!ref) {
    throw new UsageError(`no sessions in ${paths.sessionsDir} yet, so no manifests to inspect`, {
      hint: "Run 'valarmind chat' first; every model call writes a manifest. 'valarmind prompt --dry-run' works without one.",
    });
  }
  return ref;
}

/**
 * Resolves `--show`/`--diff` selectors: a 1-based index from --list, a negative index from the end,
 * or "turn-step" (12-1). A damaged manifest is an error saying what is wrong with it.
 */
function pick(list: readonly ManifestEntry[], selector: string): ListedManifest {
  const index = /^-?\d+$/.test(selector) ? Number(selector) : undefined;
  let found: ManifestEntry | undefined;
  if (index !== undefined) found = index < 0 ? list.at(index) : list[index - 1];
  else {
    const m = /^(\d+)[-·.](\d+)$/.exec(selector);
    // By file name (0012-01.json, a rebuilt step 0012-01-2.json), so a damaged one is found too.
    const named = m ? list.filter((x) => turnStepOf(x.path) === `${Number(m[1])}-${Number(m[2])}`) : [];
    if (named.length > 1) {
      const numbers = named.map((x) => `${list.indexOf(x) + 1} (${basename(x.path)})`);
      throw new UsageError(`manifest '${selector}' is ambiguous: turn ${m?.[1]} step ${m?.[2]} was built ${named.length} times, ${numbers.join(", ")}`, {
        hint: "Pick one by its number from 'valarmind prompt --list'.",
      });
    }
    found = named[0];
  }
  if (found && !("manifest" in found) && found.newer) {
    throw new ValarmindError(`manifest ${selector} cannot be read: ${found.problem}`, { hint: "Update valarmind to read it; the file is fine and is left as it is." });
  }
  if (found && !("manifest" in found)) {
    throw new ValarmindError(`manifest ${selector} is damaged: ${found.problem}`, {
      hint: "A manifest only describes a past call: delete the file or restore it; the other manifests are unaffected (valarmind prompt --list).",
    });
  }
  if (!found) {
    throw new UsageError(`no manifest '${selector}' in this session (it has ${list.length})`, {
      hint: "Use a number from 'valarmind prompt --list', -1 for the latest, or TURN-STEP such as 12-1.",
    });
  }
  return found;
}

/** "12-1" for 0012-01.json and a rebuilt 0012-01-2.json; undefined for summary requests and other names. */
function turnStepOf(path: string): string | undefined {
  const m = /^(\d{4})-(\d{2})(?:-\d+)?\.json$/.exec(basename(path));
  return m ? `${Number(m[1])}-${Number(m[2])}` : undefined;
}

async function history(paths: WorkspacePaths, opts: PromptOptions): Promise<number> {
  const ref = sessionFor(paths, opts.session);
  const list = await readManifestEntries(ref.dir);
  const paint = makePaint(colorEnabled());
  if (opts.list) {
    for (const entry of list) if ("problem" in entry) process.stderr.write(terminalSafe(`valarmind: skipped ${entry.newer ? "a manifest this valarmind cannot read" : "a damaged manifest"}: ${entry.problem}\n`));
    if (opts.json) write(`${jsonForTerminal(list.map((x) => ("manifest" in x ? { path: x.path, ...x.manifest } : { path: x.path, damaged: x.problem })), 2)}\n`);
    else write(formatManifestList(ref.id, terminalSafe(relative(process.cwd(), ref.dir) || ref.dir), terminalSafeRowsDeep(list), paint));
    return 0;
  }
  if (opts.show !== undefined) {
    const one = pick(list, opts.show);
    if (opts.json) write(`${jsonForTerminal(one.manifest, 2)}\n`);
    else write(formatManifestReport(terminalSafeRowsDeep(one.manifest), { paint, title: terminalSafe(relative(process.cwd(), one.path) || one.path), all: opts.all }));
    return 0;
  }
  const [a, b] = opts.diff ?? [];
  if (a === undefined || b === undefined || (opts.diff?.length ?? 0) !== 2) {
    throw new UsageError("--diff takes exactly two manifests: --diff A B", { hint: "For example: valarmind prompt --diff 3 4, or --diff -2 -1." });
  }
  const left = pick(list, a);
  const right = pick(list, b);
  const diff = diffManifests(left.manifest, right.manifest);
  if (opts.json) write(`${jsonForTerminal(diff, 2)}\n`);
  else write(formatManifestDiff(terminalSafeRowsDeep(left), terminalSafeRowsDeep(right), terminalSafeRowsDeep(diff), paint));
  return 0;
}

export async function runPrompt(opts: PromptOptions): Promise<number> {
  const modes = [opts.list, opts.show !== undefined, opts.diff !== undefined].filter(Boolean).length;
  if (modes > 1) throw new UsageError("use one of --list, --show and --diff at a time");
  if (modes === 1 && opts.message !== undefined) throw new UsageError("a message only goes with --dry-run, not with --list, --show or --diff");
  if (modes === 1 && opts.tokens === "api") throw new UsageError("--tokens api counts a request being built: use it with --dry-run");
  const paths = workspacePaths(findWorkspaceRoot());
  if (modes === 1) return history(paths, opts);
  // The request a chat would build here: project settings only as far as the folder is trusted.
  const loaded = resolveSettings(paths.root, {}, { trusted: decideTrust(paths.root, undefined).trusted });
  const project = loaded.project;
  // Said as chat says it: a clone's settings that this build leaves out.
  const notes = project && !project.trusted && project.ignored.length > 0 ? [ignoredSettingsMessage(paths.root, project)] : [];
  return dryRun(paths, loaded.settings, opts, notes);
}
