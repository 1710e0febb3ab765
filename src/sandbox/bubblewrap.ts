/**
 * The Linux shell sandbox: bubblewrap (`bwrap`). `bubblewrapArgs` is the pure argv that puts one
 * command in new mount, PID, IPC, UTS (and, without network, network) namespaces over a read-only
 * view of the file system; `probeBubblewrap` checks once per process that bwrap exists and can
 * create those namespaces here (containers often forbid them). macOS would use Seatbelt
 * (`sandbox-exec`); not implemented, so there the sandbox is reported unavailable.
 */
import { existsSync, lstatSync } from "node:fs";
import { isAbsolute, join, relative, resolve } from "node:path";
import { configuredHooksPath } from "../git/hooks-path.ts";
import { userConfigDir } from "../config/user-config-dir.ts";
import { realPathOrSelf } from "../real-path-or-self.ts";
import { rlimitPrefix, runsAsRoot } from "./process-limit.ts";

export type SandboxMode = "workspace-write" | "read-only" | "off";

export interface SandboxPolicy {
  mode: Exclude<SandboxMode, "off">;
  network: boolean;
  /** RLIMIT_NPROC for the command, set inside a user namespace of its own (process-limit.ts); not for root. */
  processLimit?: number;
}

/** `userNamespace`: bwrap can also make a user namespace here (where a non-root process limit is set). */
export type BubblewrapProbe = { available: true; path: string; userNamespace: boolean } | { available: false; reason: string };

/** Where bwrap is looked for; VALARMIND_TEST_BWRAP exists only so tests can simulate a machine without it. */
export function defaultBubblewrapPath(): string {
  return process.env.VALARMIND_TEST_BWRAP ?? "/usr/bin/bwrap";
}

const probes = new Map<string, BubblewrapProbe>();

/** Runs `bwrap ... true` once per path and process; the answer is cached. */
export function probeBubblewrap(path = defaultBubblewrapPath()): BubblewrapProbe {
  const cached = probes.get(path);
  if (cached) return cached;
  const probe = runProbe(path);
  probes.set(path, probe);
  return probe;
}

function runProbe(path: string): BubblewrapProbe {
  if (process.platform !== "linux") return { available: false, reason: `the shell sandbox is implemented for Linux only (this is ${process.platform})` };
  if (!existsSync(path)) return { available: false, reason: `bubblewrap is not installed (${path} not found)` };
  const args = [path, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--cap-drop", "ALL", "--unshare-pid", "--unshare-ipc", "--unshare-net", "--unshare-uts"];
  const attempt = (extra: string[]) => Bun.spawnSync([...args, ...extra, "true"], { stdout: "ignore", stderr: "pipe", env: { PATH: process.env.PATH ?? "/usr/bin:/bin" } });
  // Root's process limit is a cgroup, not the user namespace's RLIMIT_NPROC: it does not need one.
  if (!runsAsRoot() && attempt(["--unshare-user"]).exitCode === 0) return { available: true, path, userNamespace: true };
  const run = attempt([]);
  if (run.exitCode === 0) return { available: true, path, userNamespace: false };
  const why = run.stderr.toString().trim().split("\n")[0] ?? "";
  return { available: false, reason: `bubblewrap (${path}) cannot create namespaces here${why === "" ? "" : `: ${why}`}` };
}

/** What to tell the user, once, when commands cannot be sandboxed. */
export function sandboxUnavailableNotice(reason: string): string {
  return (
    `shell commands cannot be sandboxed: ${reason}. Every run_shell call will ask first, even in full-auto ` +
    `(headless runs refuse them). Install bubblewrap (apt-get install bubblewrap), or set sandbox: "off" ` +
    `(--sandbox off, VALARMIND_SANDBOX=off or your user config) to run commands unsandboxed, knowingly.`
  );
}

/**
 * bwrap's argv (without the command) for a command run in `root`. Later mounts cover earlier
 * ones: the whole file system read-only, a private /tmp (and, without network, empty /run and
 * /var/run), then the workspace (read-write unless read-only mode) with `.git/`, `.valarmind/`
 * and git's hook directories read-only again (`guardedPaths`). No capabilities, whoever runs it.
 */
export function bubblewrapArgs(bwrap: string, root: string, policy: SandboxPolicy): string[] {
  const args = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"];
  // Without network, host services listening on unix sockets are out of reach too (the Docker
  // socket is root on the host; the session bus runs anything): connect() needs no write access,
  // so the read-only view alone would not stop it. With network, /run keeps resolv.conf's target.
  if (!policy.network) for (const dir of RUNTIME_DIRS) if (isRealDirectory(dir)) args.push("--tmpfs", dir);
  args.push(policy.mode === "read-only" ? "--ro-bind" : "--bind", root, root);
  for (const path of guardedPaths(root)) args.push("--ro-bind", path, path);
  // Root in a container keeps every capability inside bwrap's namespaces: it could remount / read-write or unmount the guards.
  args.push("--cap-drop", "ALL");
  args.push("--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try");
  if (!policy.network) args.push("--unshare-net");
  if (policy.processLimit !== undefined) args.push("--unshare-user");
  // Compilers and test runners write to $TMPDIR; only the private /tmp is writable.
  args.push("--setenv", "TMPDIR", "/tmp");
  args.push("--die-with-parent", "--new-session", "--chdir", root, "--");
  if (policy.processLimit !== undefined) args.push(...rlimitPrefix(policy.processLimit));
  return args;
}

/** Where host services keep their sockets. */
const RUNTIME_DIRS = ["/run", "/var/run"];

function isRealDirectory(path: string): boolean {
  try {
    const info = lstatSync(path);
    return info.isDirectory() && !info.isSymbolicLink();
  } catch {
    return false;
  }
}

/**
 * What a command must not write even in workspace-write mode, because something outside the
 * sandbox runs it: `.git/` (hooks, config) and `.valarmind/`, and the hook directories git is told
 * to use instead — husky's `.husky/`, `.githooks/`, `.git-hooks/` and `core.hooksPath` in
 * `.git/config` when it points inside the workspace.
 */
export function guardedPaths(root: string): string[] {
  const candidates = [".git", ".valarmind", ".husky", ".githooks", ".git-hooks"].map((name) => join(root, name));
  const hooksPath = configuredHooksPath(root);
  if (hooksPath !== undefined) candidates.push(hooksPath);
  // The user's own settings, when ~/.config/valarmind links into this workspace (a dotfiles repository).
  candidates.push(realPathOrSelf(userConfigDir()));
  const inside = (path: string) => {
    const rel = relative(root, path);
    return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel);
  };
  return [...new Set(candidates)].filter((path) => inside(path) && existsSync(path));
}
