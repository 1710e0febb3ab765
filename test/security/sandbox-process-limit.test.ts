/**
 * A sandboxed command's processes are bounded (shellProcessLimit), so a fork bomb or a runaway
 * script cannot fill the machine's process table. Real bwrap throughout:
 * - as root (CI, containers): run_shell puts each command in a pids cgroup of its own, removed
 *   after it; the model is told when the limit stopped forks;
 * - as another user (setpriv to nobody): RLIMIT_NPROC inside bwrap's user namespace, which counts
 *   the namespace's processes only, so the user's other processes neither count nor are limited.
 */
import { afterAll, expect, test } from "bun:test";
import { chmodSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resolveSettings } from "../../src/config/load-settings.ts";
import { bubblewrapArgs, probeBubblewrap } from "../../src/sandbox/bubblewrap.ts";
import { cgroupMounts, processBound } from "../../src/sandbox/process-limit.ts";
import { call, makeWorkspace, registryFor, removeWorkspaces, TEST_SETTINGS } from "../tools/temp-workspace.ts";

const asRoot = process.getuid?.() === 0;
const probe = probeBubblewrap();
const rootBound = asRoot && probe.available ? processBound(64, true, false) : undefined;
const scratch: string[] = [];

afterAll(() => {
  removeWorkspaces();
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
});

/**
 * Forks up to `n` sleeping children and prints how many it got. perl, not bash: bash retries a
 * refused fork for half a minute; perl gives up at the first.
 */
function spawnMany(n: number): string {
  const script = `my @k; for (1..${n}) { my $p = fork(); last unless defined $p; if ($p == 0) { sleep 20; exit 0 } push @k, $p } print "alive=" . scalar(@k) . "\\n"; kill "KILL", @k; waitpid($_, 0) for @k;`;
  return `perl -e '${script}'`;
}

function alive(output: string): number {
  const match = /alive=(\d+)/.exec(output);
  if (!match) throw new Error(`no count in: ${output}`);
  return Number(match[1]);
}

// Root's mechanism can only be tried as root (CI runs as root); the other one is tried either way.
test.skipIf(!asRoot)("root: a command past the limit gets no more processes, is told why, and its cgroup is removed", async () => {
  expect(rootBound?.kind).toBe("cgroup");
  if (rootBound?.kind !== "cgroup") return;
  const root = makeWorkspace();
  const registry = registryFor(root, { settings: { ...TEST_SETTINGS, sandbox: "workspace-write", network: false, shellEnv: [], shellProcessLimit: 64 } });
  const r = await call(registry, "run_shell", { command: spawnMany(200) });
  const count = alive(r.forModel);
  // bwrap's init, bash and the counting pipeline take a few of the 64.
  expect(count).toBeGreaterThan(40);
  expect(count).toBeLessThan(64);
  expect(r.forModel).toContain("reached the sandbox's limit of 64 processes (shellProcessLimit)");
  expect(readdirSync(rootBound.parent).filter((name) => name.startsWith(`valarmind-${process.pid}-`))).toEqual([]);

  // The command can neither raise its cgroup's limit nor leave the cgroup: /sys is read-only in the sandbox, and it has no capabilities.
  const escape = await call(registry, "run_shell", {
    command: `for f in ${rootBound.parent}/valarmind-*/pids.max; do echo max > "$f" && echo RAISED; done; echo $$ > ${rootBound.parent}/cgroup.procs && echo LEFT; true`,
  });
  const printed = escape.forModel.slice(escape.forModel.indexOf("\nexit code"));
  expect(printed).toContain("Read-only file system");
  expect(printed).not.toMatch(/RAISED|LEFT/);

  // Under the limit: every process starts, and nothing is said about a limit.
  const small = await call(registry, "run_shell", { command: spawnMany(20) });
  expect(alive(small.forModel)).toBe(20);
  expect(small.forModel).not.toContain("limit of");
});

test.skipIf(!asRoot)("root: each command has its own budget, so one that used it all does not starve the next", async () => {
  expect(rootBound?.kind).toBe("cgroup");
  const root = makeWorkspace();
  const registry = registryFor(root, { settings: { ...TEST_SETTINGS, sandbox: "workspace-write", network: false, shellEnv: [], shellProcessLimit: 32 } });
  const [a, b] = await Promise.all([call(registry, "run_shell", { command: spawnMany(25) }), call(registry, "run_shell", { command: spawnMany(25) })]);
  expect(alive(a.forModel)).toBe(25);
  expect(alive(b.forModel)).toBe(25);
});

/** bwrap with run_shell's own argv, around `bash -lc script`, as uid 65534 (nobody) when run as root. */
async function asNobody(script: string, limit: number, before = ""): Promise<string> {
  if (!probe.available) throw new Error("bwrap is needed");
  const root = mkdtempSync(join(tmpdir(), "valarmind-nproc-"));
  scratch.push(root);
  chmodSync(root, 0o777);
  const argv = [...bubblewrapArgs(probe.path, root, { mode: "workspace-write", network: false, processLimit: limit }), "bash", "-lc", script];
  const quoted = argv.map((a) => `'${a.replaceAll("'", `'\\''`)}'`).join(" ");
  const user = asRoot ? ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] : [];
  const proc = Bun.spawn([...user, "bash", "-c", `${before}\n${quoted}; status=$?; kill $(jobs -p) 2>/dev/null; exit $status`], {
    cwd: root,
    stdout: "pipe",
    stderr: "pipe",
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
  });
  const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return `${out}\n${err}`;
}

test("not root: RLIMIT_NPROC inside the user namespace bounds the command, not the user's other processes", async () => {
  // 80 processes of the same user outside the sandbox, then a sandbox limited to 48: they do not count.
  const outside = "for i in $(seq 80); do sleep 20 & done";
  const output = await asNobody(spawnMany(30), 48, outside);
  expect(alive(output)).toBe(30);
  // Past the limit, forks fail inside the sandbox.
  const bounded = await asNobody(spawnMany(200), 48);
  expect(alive(bounded)).toBeLessThan(48);
  expect(alive(bounded)).toBeGreaterThan(30);
  // And the command cannot raise its own limit again.
  const raise = await asNobody("ulimit -u 100000 && echo raised || echo refused", 48);
  expect(raise).toContain("refused");
});

test("the mountinfo reader finds the v1 pids hierarchy and v2, escaped paths included", () => {
  const info = [
    "30 24 0:26 / /sys/fs/cgroup/unified rw,nosuid - cgroup2 cgroup2 rw",
    "31 24 0:27 / /sys/fs/cgroup/pids rw,nosuid - cgroup cgroup rw,pids",
    "32 24 0:28 / /sys/fs/cgroup/memory rw,nosuid - cgroup cgroup rw,memory",
    "33 24 0:29 /ns /mnt/with\\040space rw - cgroup2 cgroup2 rw",
    "34 24 8:1 / / rw - ext4 /dev/sda1 rw",
  ].join("\n");
  expect(cgroupMounts(info)).toEqual([
    { version: 2, root: "/", mountPoint: "/sys/fs/cgroup/unified" },
    { version: 1, root: "/", mountPoint: "/sys/fs/cgroup/pids" },
    { version: 2, root: "/ns", mountPoint: "/mnt/with space" },
  ]);
});

test("without a user namespace a non-root user is not bounded, and the reason says so", () => {
  const bound = processBound(64, false, false);
  expect(bound.kind).toBe("none");
  expect(bound.kind === "none" && bound.reason).toContain("user namespace");
  expect(processBound(64, false, true)).toEqual({ kind: "rlimit", limit: 64 });
});

test("settings: shellProcessLimit is checked; an untrusted project may lower it, never raise it", () => {
  const config = makeWorkspace();
  const saved = process.env.XDG_CONFIG_HOME;
  process.env.XDG_CONFIG_HOME = config;
  try {
    const project = (value: unknown) => {
      const root = makeWorkspace({ ".valarmind/config.json": JSON.stringify({ shellProcessLimit: value }) });
      return root;
    };
    expect(resolveSettings(makeWorkspace()).settings.shellProcessLimit).toBe(4096);
    expect(resolveSettings(project(256)).settings.shellProcessLimit).toBe(256);
    const raised = resolveSettings(project(100000));
    expect(raised.settings.shellProcessLimit).toBe(4096);
    expect(raised.project?.ignored.map((c) => c.key)).toEqual(["shellProcessLimit"]);
    expect(resolveSettings(project(100000), {}, { trusted: true }).settings.shellProcessLimit).toBe(100000);
    expect(() => resolveSettings(project(3))).toThrow(/shellProcessLimit/);
  } finally {
    if (saved === undefined) delete process.env.XDG_CONFIG_HOME;
    else process.env.XDG_CONFIG_HOME = saved;
  }
});
