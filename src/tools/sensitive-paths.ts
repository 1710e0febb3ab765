/**
 * Workspace files whose change runs code or steers the agent later: instruction files, git hooks,
 * CI workflows, files tools like direnv execute. Writing them asks even in auto-edit
 * (docs/security.md); only full-auto skips the question. Compared case-insensitively, at any depth.
 */
import { basename, dirname, isAbsolute, join, relative, resolve } from "node:path";
import { userConfigDir } from "../config/user-config-dir.ts";
import { configuredHooksPath } from "../git/hooks-path.ts";
import { realPathOrSelf } from "../real-path-or-self.ts";
const INSTRUCTION_FILES = new Set(["valarmind.md", "valarmind.local.md", "agents.md", "agents.override.md", "claude.md", "claude.local.md", "gemini.md"]);

const SENSITIVE: ReadonlyArray<{ test: (parts: string[]) => boolean; reason: string }> = [
  { test: (p) => INSTRUCTION_FILES.has(p.at(-1) ?? ""), reason: "changes agent instructions, which every later prompt follows" },
  { test: (p) => p.includes(".husky") || p.includes(".githooks") || p.includes(".git-hooks"), reason: "writes a git hook, which git runs on commit or push" },
  { test: (p) => ["lefthook.yml", ".lefthook.yml", "lefthook.yaml", ".pre-commit-config.yaml"].includes(p.at(-1) ?? ""), reason: "changes git hook configuration" },
  { test: (p) => p[0] === ".github" && (p[1] === "workflows" || p[1] === "actions"), reason: "changes a CI workflow, which runs with the repository's secrets" },
  { test: (p) => p[0] === ".gitlab-ci.yml" || p[0] === ".circleci" || p[0] === "azure-pipelines.yml", reason: "changes a CI pipeline" },
  { test: (p) => [".envrc", ".gitmodules"].includes(p.at(-1) ?? ""), reason: "changes a file other tools execute or fetch from (direnv, git submodules)" },
  { test: (p) => p[0] === ".vscode" || p[0] === ".devcontainer" || p[0] === ".idea", reason: "changes editor configuration, which can run tasks" },
];

/**
 * Why writing `rel` (in the workspace `root`) must ask even in auto-edit, or undefined: the static
 * list above, a hook in the repository's `core.hooksPath`, and the user's own valarmind
 * configuration reached through the workspace (a dotfiles repository that ~/.config/valarmind
 * links into), whose settings decide approvals, the sandbox and which folders are trusted.
 */
export function sensitiveWriteReason(rel: string, root?: string): string | undefined {
  const parts = rel.toLowerCase().split("/");
  const hit = SENSITIVE.find((entry) => entry.test(parts));
  if (hit) return `${rel} ${hit.reason}`;
  if (root === undefined) return undefined;
  const abs = resolve(root, rel);
  const hooks = configuredHooksPath(root);
  if (hooks !== undefined && within(hooks, abs)) return `${rel} writes a git hook (core.hooksPath), which git runs on commit or push`;
  const config = realPathOrSelf(userConfigDir());
  if (within(config, realParentJoin(abs))) return `${rel} changes your own valarmind configuration (${userConfigDir()}), which decides approvals, the sandbox and trusted folders`;
  return undefined;
}

function within(dir: string, path: string): boolean {
  const rel = relative(dir, path);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}

/** The path with its directory's symlinks resolved (the file itself may not exist yet). */
function realParentJoin(abs: string): string {
  return join(realPathOrSelf(dirname(abs)), basename(abs));
}
