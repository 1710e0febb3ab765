/**
 * How many processes (tasks: threads count) one sandboxed command may have at once, so that a
 * fork bomb or a runaway script cannot fill the machine's process table. Two mechanisms, because
 * Linux exempts root from the first:
 *
 * - not root: RLIMIT_NPROC, set inside bwrap's user namespace (`--unshare-user`). Since Linux
 *   5.14 that limit counts the processes of the namespace, not every process of the user, so the
 *   user's other programs neither count against it nor are limited by it. Set before bwrap made
 *   the namespace, it would also cap the namespace's creation at the user's total, hence inside.
 * - root: the kernel never applies RLIMIT_NPROC to uid 0, so each command gets its own pids
 *   cgroup (v1 `pids` hierarchy, or v2 with the pids controller), created below valarmind's own
 *   cgroup, joined by a tiny `sh` before bwrap starts, removed after the command.
 *
 * Where neither works (root with a read-only /sys/fs/cgroup, as in most containers; a setuid bwrap
 * without user namespaces) commands are still sandboxed, only not bounded: `processBound` says why.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join, relative, isAbsolute } from "node:path";
import { describeError, errnoCode } from "../errors.ts";

export const DEFAULT_PROCESS_LIMIT = 4096;

/** How this machine bounds a sandboxed command's processes. */
export type ProcessBound =
  | { kind: "rlimit"; limit: number }
  | { kind: "cgroup"; limit: number; parent: string }
  | { kind: "none"; reason: string };

/** Whether valarmind runs as uid 0, which RLIMIT_NPROC never limits. */
export function runsAsRoot(): boolean {
  return process.getuid?.() === 0;
}

/** The bound a sandboxed command gets on this machine, given bwrap's probe. */
export function sandboxProcessBound(limit: number, probe: { userNamespace: boolean }): ProcessBound {
  return processBound(limit, runsAsRoot(), probe.userNamespace);
}

/**
 * Which mechanism applies for `limit`: `asRoot` is whether valarmind runs as uid 0,
 * `userNamespace` whether bwrap can make a user namespace here (the probe's answer).
 */
export function processBound(limit: number, asRoot: boolean, userNamespace: boolean): ProcessBound {
  if (!asRoot) {
    if (userNamespace) return { kind: "rlimit", limit };
    return { kind: "none", reason: "bubblewrap cannot create a user namespace here, and outside one the limit would count every process of yours" };
  }
  const parent = pidsCgroupParent();
  return "dir" in parent ? { kind: "cgroup", limit, parent: parent.dir } : { kind: "none", reason: parent.reason };
}

/**
 * The argv between bwrap's `--` and `bash -lc COMMAND` that sets RLIMIT_NPROC (soft and hard, so
 * the command cannot raise it again) inside the namespace; bash, since the command needs it anyway.
 */
export function rlimitPrefix(limit: number): string[] {
  return ["bash", "-c", 'ulimit -u "$1" || exit 126; shift; exec "$@"', "valarmind-process-limit", String(limit)];
}

/** A command's own pids cgroup: the argv that joins it (before bwrap), and what is done after. */
export interface CommandCgroup {
  limit: number;
  /** `sh` writes its own pid into the cgroup, then becomes bwrap: nothing forks before it is in. */
  prefix: string[];
  /** Whether a fork was refused for the limit (pids.events' `max`). */
  hitLimit(): boolean;
  /**
   * Removes the cgroup once its last task is gone: the PID namespace has ended by then, but the
   * kernel may still be reaping (EBUSY), so it retries for up to CLOSE_WAIT_MS; one still busy is
   * left for `sweepStale` of a later run.
   */
  close(): Promise<void>;
}

let created = 0;

/** Creates the cgroup for one command under `bound.parent`; throws with the reason if it cannot. */
export function openCommandCgroup(bound: { limit: number; parent: string }): CommandCgroup {
  sweepStale(bound.parent);
  const dir = join(bound.parent, `valarmind-${process.pid}-${++created}`);
  mkdirSync(dir);
  try {
    writeFileSync(join(dir, "pids.max"), String(bound.limit));
  } catch (error) {
    removeQuietly(dir);
    throw error;
  }
  return {
    limit: bound.limit,
    prefix: ["/bin/sh", "-c", 'echo $$ > "$1" || exit 126; shift; exec "$@"', "valarmind-process-limit", join(dir, "cgroup.procs")],
    hitLimit: () => /^max [1-9]/m.test(readOr(join(dir, "pids.events"), "")),
    close: async () => {
      const deadline = performance.now() + CLOSE_WAIT_MS;
      while (!removeQuietly(dir) && performance.now() < deadline) await Bun.sleep(5);
    },
  };
}

/** How long `close` retries the removal of a cgroup whose tasks are still being reaped. */
const CLOSE_WAIT_MS = 1000;

function readOr(path: string, fallback: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return fallback;
  }
}

/** rmdir of an empty cgroup: whether it is gone. EBUSY (a task not yet reaped) leaves it. */
function removeQuietly(dir: string): boolean {
  try {
    rmdirSync(dir);
    return true;
  } catch (error) {
    return errnoCode(error) === "ENOENT";
  }
}

/** Cgroups a valarmind that has exited left behind (killed before its close). */
function sweepStale(parent: string): void {
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = /^valarmind-(\d+)-\d+$/.exec(name)?.[1];
    if (pid === undefined || Number(pid) === process.pid || existsSync(`/proc/${pid}`)) continue;
    removeQuietly(join(parent, name));
  }
}

let parentCache: { dir: string } | { reason: string } | undefined;

/**
 * The directory in which a command's pids cgroup can be made: valarmind's own cgroup in the v1
 * `pids` hierarchy, else in the v2 one, checked once per process by making and removing a child.
 */
function pidsCgroupParent(): { dir: string } | { reason: string } {
  parentCache ??= findPidsCgroupParent();
  return parentCache;
}

interface CgroupMount {
  version: 1 | 2;
  root: string;
  mountPoint: string;
}

function findPidsCgroupParent(): { dir: string } | { reason: string } {
  if (process.platform !== "linux") return { reason: `process limits use Linux cgroups (this is ${process.platform})` };
  const memberships = readOr("/proc/self/cgroup", "").split("\n");
  const mounts = cgroupMounts(readOr("/proc/self/mountinfo", ""));
  const candidates: string[] = [];
  for (const line of memberships) {
    const [, controllers, path] = /^\d+:([^:]*):(.*)$/.exec(line) ?? [];
    if (path === undefined || controllers === undefined) continue;
    const v1 = controllers.split(",").includes("pids");
    if (!v1 && controllers !== "") continue;
    const mount = mounts.find((m) => (v1 ? m.version === 1 : m.version === 2));
    if (mount === undefined) continue;
    const rel = relative(mount.root, path);
    if (rel.startsWith("..") || isAbsolute(rel)) continue;
    candidates[v1 ? 0 : 1] = join(mount.mountPoint, rel);
  }
  const found = candidates.filter((dir) => dir !== undefined);
  if (found.length === 0) return { reason: "no pids cgroup is mounted here" };
  let why = "";
  for (const dir of found) {
    // Named as a command's cgroup (number 0, never a command's), so a probe left by a killed process is swept too.
    const probe = join(dir, `valarmind-${process.pid}-0`);
    try {
      mkdirSync(probe);
      const works = existsSync(join(probe, "pids.max"));
      rmdirSync(probe);
      if (works) return { dir };
      why = `the pids controller is not enabled below ${dir}`;
    } catch (error) {
      why = `cannot create a cgroup in ${dir} (${describeError(error)}; containers often mount /sys/fs/cgroup read-only)`;
    }
  }
  return { reason: why };
}

/** The cgroup file systems of /proc/self/mountinfo: the v1 one holding `pids`, and v2. */
export function cgroupMounts(mountinfo: string): CgroupMount[] {
  const mounts: CgroupMount[] = [];
  for (const line of mountinfo.split("\n")) {
    const [before, after] = line.split(" - ");
    if (before === undefined || after === undefined) continue;
    const fields = before.split(" ");
    const [fsType, , superOptions = ""] = after.split(" ");
    const root = unescapeMount(fields[3] ?? "");
    const mountPoint = unescapeMount(fields[4] ?? "");
    if (fsType === "cgroup2") mounts.push({ version: 2, root, mountPoint });
    else if (fsType === "cgroup" && superOptions.split(",").includes("pids")) mounts.push({ version: 1, root, mountPoint });
  }
  return mounts;
}

/** mountinfo escapes space, tab, newline and backslash as octal. */
function unescapeMount(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
}
