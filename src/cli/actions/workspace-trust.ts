/**
 * Folder trust as the commands apply it: whether this run treats the workspace as trusted (a
 * stored decision or `--trust`), and how ignored project settings are told to the user.
 */
import { relative } from "node:path";
import { storedTrust, type TrustLevel } from "../../config/folder-trust.ts";
import type { ProjectChange, ProjectSettingsReport } from "../../config/load-settings.ts";
import { describeServers, shownPart, shownUrl } from "../../mcp/mcp-config.ts";

export interface TrustDecision {
  trusted: boolean;
  /** The stored answer, if the user was ever asked or ran `valarmind trust`. */
  stored: TrustLevel | undefined;
  source: "flag" | "stored" | "none";
}

export function decideTrust(root: string, flag: boolean | undefined): TrustDecision {
  const stored = storedTrust(root);
  if (flag === true) return { trusted: true, stored, source: "flag" };
  return { trusted: stored === "trusted", stored, source: stored === undefined ? "none" : "stored" };
}

/**
 * A project file's value as the user deciding on trust sees it: inert (no escape sequence of a
 * clone's config reaches the terminal; odd characters escaped, see `shownPart`); a URL as the
 * parser reads it, without user name or password.
 */
function shown(key: string, value: unknown): string {
  if (typeof value !== "string") return shownPart(JSON.stringify(value) ?? String(value));
  return key === "baseURL" ? shownUrl(value) : shownPart(value);
}

/** The MCP servers a project change adds to the user's (the value is the merged map). */
function addedServers(change: ProjectChange): string {
  const before = typeof change.from === "object" && change.from !== null ? change.from : {};
  const after = typeof change.to === "object" && change.to !== null ? change.to : {};
  return describeServers(Object.fromEntries(Object.entries(after).filter(([name]) => !Object.hasOwn(before, name))));
}

/** A changed setting's value for display; MCP servers by name and command line, never their header or variable values. */
export function shownSetting(key: string, value: unknown): string {
  return key === "mcpServers" ? describeServers(value) : shown(key, value);
}

/** Why a change matters, for the trust question ("your OPENAI_API_KEY would be sent there"). */
export function changeWarning(change: ProjectChange, env: Record<string, string | undefined> = process.env): string | undefined {
  if (change.key === "baseURL") return env.OPENAI_API_KEY ? "your OPENAI_API_KEY would be sent there" : "your requests would be sent there";
  if (change.key === "approvals" && change.to === "full-auto") return "shell commands and edits would run without asking";
  if (change.key === "approvals" && change.to === "auto-edit") return "file edits would be made without asking";
  if (change.key === "mcpServers") return "the MCP servers it adds would start with every chat: programs run, URLs contacted";
  return undefined;
}

export function trustQuestion(root: string, project: ProjectSettingsReport) {
  return {
    root,
    file: relative(root, project.file),
    changes: project.ignored.map((c) => {
      const warning = changeWarning(c);
      return { key: c.key, from: c.from === undefined ? "(unset)" : shownSetting(c.key, c.from), to: shownSetting(c.key, c.to), ...(warning ? { warning } : {}) };
    }),
  };
}

/** One line: which project settings were ignored and how to apply them. */
export function ignoredSettingsMessage(root: string, project: ProjectSettingsReport): string {
  const list = project.ignored.map((c) => `${c.key}: ${c.key === "mcpServers" ? addedServers(c) : shownSetting(c.key, c.to)}`).join(", ");
  return (
    `ignoring ${relative(root, project.file)} (${list}): this folder is not trusted. ` +
    `If you trust this repository, run 'valarmind trust', or pass --trust for one run.`
  );
}
