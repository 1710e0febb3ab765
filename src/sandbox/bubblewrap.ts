/**
 * The Linux shell sandbox: bubblewrap (`bwrap`). `bubblewrapArgs` is the pure argv that puts one
 * command in new mount, PID, IPC, UTS (and, without network, network) namespaces over a read-only
 * view of the file system; `probeBubblewrap` checks once per process that bwrap exists and can
 * create those namespaces here (containers often forbid them). macOS would use Seatbelt
 * (`sandbox-exec`); not implemented, so there the sandbox is reported unavailable.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";

export type SandboxMode = "workspace-write" | "read-only" | "off";

export interface SandboxPolicy {
  mode: Exclude<SandboxMode, "off">;
  network: boolean;
}

export type BubblewrapProbe = { available: true; path: string } | { available: false; reason: string };

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
  const args = [path, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid", "--unshare-ipc", "--unshare-net", "--unshare-uts", "true"];
  const run = Bun.spawnSync(args, { stdout: "ignore", stderr: "pipe", env: { PATH: process.env.PATH ?? "/usr/bin:/bin" } });
  if (run.exitCode === 0) return { available: true, path };
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
 * ones: the whole file system read-only, a private /tmp, then the workspace (read-write unless
 * read-only mode) with its top-level `.git/` and `.valarmind/` read-only again.
 */
export function bubblewrapArgs(bwrap: string, root: string, policy: SandboxPolicy): string[] {
  const args = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"];
  args.push(policy.mode === "read-only" ? "--ro-bind" : "--bind", root, root);
  for (const guarded of [".git", ".valarmind"]) {
    const path = join(root, guarded);
    if (existsSync(path)) args.push("--ro-bind", path, path);
  }
  args.push("--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try");
  if (!policy.network) args.push("--unshare-net");
  args.push("--die-with-parent", "--new-session", "--chdir", root, "--");
  return args;
}
