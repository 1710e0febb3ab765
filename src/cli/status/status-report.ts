/**
 * What valarmind would do in this workspace, in one place: trust and the project settings it
 * applied or ignored, the model endpoint, approvals, how shell commands are confined (sandbox,
 * network, process limit), where the memory lives, MCP servers. `valarmind status` prints it
 * before a run; `/status` in the REPL for the session at hand. Pure: the facts come from
 * gather-status.ts. Every value from a file is shown inert (no URL credentials, no control codes).
 */
import type { ProjectSettingsReport } from "../../config/load-settings.ts";
import type { Settings } from "../../config/settings-schema.ts";
import { describeServers } from "../../mcp/mcp-config.ts";
import type { BubblewrapProbe } from "../../sandbox/bubblewrap.ts";
import type { ProcessBound } from "../../sandbox/process-limit.ts";
import { withoutCredentials } from "../../secrets/url-credentials.ts";
import { terminalSafe } from "../../ui/terminal-safe-text.ts";
import type { TrustDecision } from "../actions/workspace-trust.ts";

export interface StatusFacts {
  root: string;
  trust: TrustDecision;
  project: ProjectSettingsReport | undefined;
  /** The effective settings (the session's own in the REPL: /model changes them). */
  settings: Settings;
  /** The approval mode now (/approvals changes it in the REPL) and what this session allowed. */
  approvals: Settings["approvals"];
  allowances: readonly string[];
  /** Undefined when `sandbox` is "off" (bubblewrap is then not looked for). */
  bubblewrap: BubblewrapProbe | undefined;
  processBound: ProcessBound | undefined;
  baseURL: string;
  keySource: "env" | "placeholder" | "missing";
  sessionId?: string;
}

export interface StatusRow {
  label: string;
  lines: string[];
}

const APPROVAL_MEANING: Record<Settings["approvals"], string> = {
  suggest: "every file change and command asks first",
  "auto-edit": "file changes in the workspace apply unasked; commands ask",
  "full-auto": "file changes and sandboxed commands run unasked",
};

/** The project file's changes that apply in this run. */
function appliedKeys(project: ProjectSettingsReport): string[] {
  return project.changes.filter((c) => !project.ignored.includes(c)).map((c) => c.key);
}

function trustLines(f: StatusFacts): string[] {
  const { trust, project } = f;
  const state =
    trust.source === "flag"
      ? "trusted for this run (--trust)"
      : trust.stored === "trusted"
        ? "trusted (valarmind trust --revoke to forget)"
        : trust.stored === "untrusted"
          ? "not trusted: you declined (valarmind trust to change that)"
          : project
            ? "not trusted yet: an interactive chat asks when the project settings would change something"
            : "not decided (nothing to decide: no project settings here)";
  const lines = [state];
  if (!project) return [...lines, "project settings: none (.valarmind/config.json absent)"];
  const applied = appliedKeys(project);
  const ignored = project.ignored.map((c) => c.key);
  if (applied.length > 0) lines.push(`project settings applied: ${applied.join(", ")}`);
  if (ignored.length > 0) lines.push(`project settings ignored: ${ignored.join(", ")}${project.trusted ? " (only your own settings may set them)" : " (not trusted)"}`);
  if (project.userOnly.length > 0) lines.push(`ignored in any folder: ${project.userOnly.join(", ")} (your own settings only)`);
  if (applied.length === 0 && ignored.length === 0 && project.userOnly.length === 0) lines.push("project settings: the file changes nothing");
  return lines;
}

function modelLines(f: StatusFacts): string[] {
  const key = f.keySource === "env" ? "API key from OPENAI_API_KEY" : f.keySource === "placeholder" ? "no API key sent (not api.openai.com)" : "no API key: set OPENAI_API_KEY";
  return [`${f.settings.model} over ${f.settings.wireApi === "chat" ? "Chat Completions" : "the Responses API"} at ${withoutCredentials(f.baseURL)}`, `${key}; reasoning effort ${f.settings.reasoningEffort}`];
}

function boundLine(bound: ProcessBound | undefined): string {
  if (!bound) return "processes: not limited";
  if (bound.kind === "rlimit") return `at most ${bound.limit} processes at once (RLIMIT_NPROC in the command's user namespace)`;
  if (bound.kind === "cgroup") return `at most ${bound.limit} processes at once (a pids cgroup per command)`;
  return `processes not limited here: ${bound.reason}`;
}

function shellLines(f: StatusFacts): string[] {
  const s = f.settings;
  const timeout = `timeout ${s.shellTimeoutMs / 1000} s`;
  const env = `environment: the allowlist${s.shellEnv.length > 0 ? ` + ${s.shellEnv.join(", ")}` : ""} (no secret-named variable unless listed in shellEnv)`;
  if (s.sandbox === "off") return ["NOT sandboxed (sandbox: off, your choice): commands run with your privileges, any file, the network", timeout, env];
  if (!f.bubblewrap?.available) {
    const why = f.bubblewrap?.available === false ? f.bubblewrap.reason : "bubblewrap was not probed";
    return [`NOT sandboxed: ${why}`, "so every command asks first, in full-auto too (headless runs refuse them)", timeout, env];
  }
  const writable = s.sandbox === "read-only" ? "only a private /tmp (the workspace is read-only too)" : "the workspace (not .git/, .valarmind/, git hooks) and a private /tmp";
  return [
    `sandboxed by bubblewrap (${f.bubblewrap.path})`,
    `writable: ${writable}; the rest is read-only`,
    `network ${s.network ? "ON (network: true)" : "off"}; ${boundLine(f.processBound)}`,
    timeout,
    env,
  ];
}

function memoryLines(f: StatusFacts): string[] {
  const s = f.settings;
  const store = s.store === "file" ? "working state in .valarmind/memory/state.json" : `working state in ${withoutCredentials(s.store)}${s.projectId !== undefined ? ` (project ${s.projectId})` : ""}`;
  return [store, `request budget ${s.maxContextTokens} tokens; window up to ${s.shortBufferTurns} turns`];
}

function mcpLines(f: StatusFacts): string[] {
  const servers = f.settings.mcpServers ?? {};
  if (Object.keys(servers).length === 0) return ["no servers configured"];
  const allowed = f.settings.mcp?.allow ?? [];
  return [describeServers(servers), allowed.length > 0 ? `tools run unasked for: ${allowed.join(", ")}` : "every tool call asks first (none in mcp.allow)"];
}

/** The report as labelled rows, every value terminal-safe. */
export function statusRows(f: StatusFacts): StatusRow[] {
  const rows: StatusRow[] = [
    { label: "workspace", lines: [f.root, ...trustLines(f)] },
    ...(f.sessionId !== undefined ? [{ label: "session", lines: [f.sessionId] }] : []),
    { label: "model", lines: modelLines(f) },
    { label: "approvals", lines: [`${f.approvals}: ${APPROVAL_MEANING[f.approvals]}`, ...f.allowances.map((a) => `allowed this session: ${a}`)] },
    { label: "shell", lines: shellLines(f) },
    { label: "memory", lines: memoryLines(f) },
    { label: "mcp", lines: mcpLines(f) },
  ];
  return rows.map((row) => ({ label: row.label, lines: row.lines.map((line) => terminalSafe(line)) }));
}

/** Rows as aligned text lines: the label once, continuation lines indented under the value. */
export function statusLines(rows: readonly StatusRow[]): string[] {
  const width = Math.max(...rows.map((r) => r.label.length)) + 2;
  return rows.flatMap((row) => row.lines.map((line, i) => `${(i === 0 ? row.label : "").padEnd(width)}${line}`));
}

/** What `valarmind status --json` prints: the same facts, as data. */
export function statusJson(f: StatusFacts): Record<string, unknown> {
  const project = f.project;
  return {
    root: f.root,
    trust: { trusted: f.trust.trusted, source: f.trust.source, stored: f.trust.stored ?? null },
    projectSettings: project
      ? { file: project.file, applied: appliedKeys(project), ignored: project.ignored.map((c) => c.key), userOnly: project.userOnly }
      : null,
    ...(f.sessionId !== undefined ? { sessionId: f.sessionId } : {}),
    model: { name: f.settings.model, wireApi: f.settings.wireApi, baseURL: withoutCredentials(f.baseURL), apiKey: f.keySource, reasoningEffort: f.settings.reasoningEffort },
    approvals: { mode: f.approvals, allowances: f.allowances },
    shell: {
      sandbox: f.settings.sandbox,
      bubblewrap: f.bubblewrap === undefined ? null : f.bubblewrap.available ? { available: true, path: f.bubblewrap.path } : { available: false, reason: f.bubblewrap.reason },
      network: f.settings.network,
      processLimit: f.processBound === undefined ? null : f.processBound.kind === "none" ? { enforced: false, reason: f.processBound.reason } : { enforced: true, limit: f.processBound.limit, by: f.processBound.kind },
      timeoutMs: f.settings.shellTimeoutMs,
      shellEnv: f.settings.shellEnv,
    },
    memory: { store: f.settings.store === "file" ? "file" : withoutCredentials(f.settings.store), maxContextTokens: f.settings.maxContextTokens, shortBufferTurns: f.settings.shortBufferTurns },
    mcp: { servers: Object.keys(f.settings.mcpServers ?? {}), allow: f.settings.mcp?.allow ?? [] },
  };
}
