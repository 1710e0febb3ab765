/**
 * Which project a shared store's keys belong to: the `projectId` setting, else the URL of git
 * remote `origin`, normalized so that every clone and worktree of one repository agrees
 * (`https://user:token@GitHub.com/org/repo.git`, `git@github.com:org/repo` and
 * `ssh://git@github.com:22/org/repo.git` are all `github.com/org/repo`).
 */
import { userConfigFileShown } from "../config/user-config-dir.ts";
import { isAbsolute, resolve } from "node:path";
import { UsageError } from "../errors.ts";
import { runGit } from "../git/safe-git.ts";

/** A remote URL without scheme, credentials, port, `.git` or trailing slashes; local paths stay paths. */
export function normalizeRemoteUrl(url: string, root: string): string {
  const trimmed = url.trim();
  const strip = (path: string) => path.replace(/\/+$/, "").replace(/\.git$/, "").replace(/\/+$/, "");
  const scp = /^(?:[^@/:]+@)?([^/:]+):(?!\/)(.+)$/.exec(trimmed);
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed)) {
    const parsed = URL.parse(trimmed);
    if (parsed && parsed.protocol !== "file:") {
      const host = parsed.hostname.toLowerCase();
      const path = strip(decodeURIComponent(parsed.pathname)).replace(/^\/+/, "").replace(/^~/, "");
      return `${host}/${path}`;
    }
    if (parsed) return `file:${strip(decodeURIComponent(parsed.pathname))}`;
  }
  // scp-like `user@host:path`, but not a Windows drive (`C:\…`) or a local path containing ':'.
  if (scp && scp[1] !== undefined && scp[2] !== undefined && scp[1].length > 1 && !trimmed.startsWith("/") && !trimmed.startsWith(".")) {
    return `${scp[1].toLowerCase()}/${strip(scp[2]).replace(/^\/+/, "").replace(/^~/, "")}`;
  }
  return `file:${strip(isAbsolute(trimmed) ? trimmed : resolve(root, trimmed))}`;
}

export interface ProjectIdentity {
  /** What the keys are namespaced by: `id:<projectId>` or `git:<normalized origin>`. */
  namespace: string;
  /** For messages: where the identity came from. */
  from: string;
}

export async function resolveProjectIdentity(root: string, projectId: string | undefined): Promise<ProjectIdentity> {
  if (projectId !== undefined) return { namespace: `id:${projectId}`, from: `projectId "${projectId}"` };
  const origin = await runGit(root, ["config", "--get", "remote.origin.url"]);
  const url = origin.exitCode === 0 ? origin.stdout.trim() : "";
  if (url === "") {
    throw new UsageError(`the shared state store needs to know which project ${root} is, and it has no git remote 'origin' and no projectId setting`, {
      hint: `Set "projectId" in .valarmind/config.json (or ${userConfigFileShown()}), or add the remote every clone shares: git remote add origin URL.`,
    });
  }
  const normalized = normalizeRemoteUrl(url, root);
  return { namespace: `git:${normalized}`, from: `git remote origin (${normalized})` };
}
