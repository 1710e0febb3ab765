/**
 * bin/valarmind finds Bun (PATH, $BUN_INSTALL/bin, ~/.bun/bin) or says how to install it and exits
 * 127, and finds its package through relative symlink chains like npm's and bun's global bin links;
 * it runs the JavaScript bundle (dist/js) in an installed package, and in a checkout while no source
 * file is newer than it.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, copyFileSync, cpSync, mkdirSync, rmSync, symlinkSync, utimesSync } from "node:fs";
import { buildJsBundle } from "../../scripts/build.ts";
import { startFakeResponsesServer, textStream } from "../support/fake-responses-server.ts";
import { join, resolve } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { cleanupTempDirs, makeTempDir } from "../support/cli.ts";

const BIN = resolve(import.meta.dir, "../../bin/valarmind");
afterAll(cleanupTempDirs);

/** A PATH holding only the commands the launcher uses, and no bun. */
async function pathWithoutBun(): Promise<string> {
  const dir = await makeTempDir("valarmind-nobun-");
  for (const tool of ["readlink", "dirname", "cat"]) {
    const found = Bun.which(tool);
    if (!found) throw new Error(`${tool} is not installed; the launcher needs it`);
    symlinkSync(found, join(dir, tool));
  }
  return dir;
}

async function run(argv: string[], env: Record<string, string>) {
  const proc = Bun.spawn(argv, { cwd: await makeTempDir(), stdout: "pipe", stderr: "pipe", env: { NO_COLOR: "1", ...env } });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, code };
}

describe("bin/valarmind without bun on PATH", () => {
  test("says Bun is missing and exactly how to install it, and exits 127", async () => {
    const home = await makeTempDir();
    const r = await run(["/bin/sh", BIN, "--version"], { PATH: await pathWithoutBun(), HOME: home });
    expect(r.code).toBe(127);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("valarmind: Bun is not installed");
    expect(r.stderr).toContain("Node.js cannot run it");
    expect(r.stderr).toContain("curl -fsSL https://bun.sh/install | bash");
    expect(r.stderr).toContain("npm install -g bun");
  });

  test("uses $BUN_INSTALL/bin/bun, then ~/.bun/bin/bun, where Bun's installer puts it", async () => {
    const path = await pathWithoutBun();
    const bunInstall = await makeTempDir();
    mkdirSync(join(bunInstall, "bin"));
    symlinkSync(process.execPath, join(bunInstall, "bin/bun"));
    const viaBunInstall = await run(["/bin/sh", BIN, "--version"], { PATH: path, HOME: await makeTempDir(), BUN_INSTALL: bunInstall });
    expect(viaBunInstall).toMatchObject({ code: 0, stdout: `${pkg.version}\n` });

    const home = await makeTempDir();
    mkdirSync(join(home, ".bun/bin"), { recursive: true });
    symlinkSync(process.execPath, join(home, ".bun/bin/bun"));
    const viaHome = await run(["/bin/sh", BIN, "--version"], { PATH: path, HOME: home });
    expect(viaHome).toMatchObject({ code: 0, stdout: `${pkg.version}\n` });
  });
});

describe("bin/valarmind through global bin links", () => {
  test("a chain of relative symlinks (prefix/bin → lib/node_modules/valarmind → the package) finds the package", async () => {
    const prefix = await makeTempDir();
    mkdirSync(join(prefix, "bin"));
    mkdirSync(join(prefix, "lib/node_modules"), { recursive: true });
    // As `npm link`/`bun link` leave it: the package dir is itself a link, the bin link is relative.
    symlinkSync(resolve(import.meta.dir, "../.."), join(prefix, "lib/node_modules/valarmind"));
    symlinkSync("../lib/node_modules/valarmind/bin/valarmind", join(prefix, "bin/valarmind"));
    symlinkSync("valarmind", join(prefix, "bin/vm"));
    for (const entry of ["bin/valarmind", "bin/vm"]) {
      const r = await run([join(prefix, entry), "--version"], { PATH: process.env.PATH ?? "", HOME: await makeTempDir() });
      expect({ entry, ...r }).toMatchObject({ entry, code: 0, stdout: `${pkg.version}\n` });
    }
  });
});

describe("bin/valarmind runs React's production build", () => {
  test("the code sees NODE_ENV=production and loads React's production build; commands it runs do not inherit it", async () => {
    // A `bun` on PATH that runs a probe in place of the entry (source or bundle), with every flag the launcher passed.
    const dir = await makeTempDir();
    const probe = join(dir, "probe.ts");
    await Bun.write(
      probe,
      [
        // ink from valarmind's own node_modules, as the REPL imports it.
        `await import(${JSON.stringify(Bun.resolveSync("ink", import.meta.dir))});`,
        "const builds = Object.keys(require.cache).filter((k) => /node_modules\\/react(-reconciler)?\\/cjs\\//.test(k)).map((k) => k.split(\"/cjs/\")[1]);",
        'const child = Bun.spawnSync(["/bin/sh", "-c", "echo ${NODE_ENV-unset}"]).stdout.toString().trim();',
        "console.log(JSON.stringify({ code: process.env.NODE_ENV, child, builds }));",
      ].join("\n"),
    );
    const bunDir = join(dir, "bin");
    mkdirSync(bunDir);
    await Bun.write(
      join(bunDir, "bun"),
      `#!/bin/sh\nfor a in "$@"; do shift; case $a in */src/cli/main.ts|*/dist/js/main.js) set -- "$@" ${JSON.stringify(probe)} ;; *) set -- "$@" "$a" ;; esac; done\nexec ${JSON.stringify(process.execPath)} "$@"\n`,
    );
    Bun.spawnSync(["chmod", "+x", join(bunDir, "bun")]);
    const r = await run(["/bin/sh", BIN], { PATH: `${bunDir}:${process.env.PATH ?? ""}`, HOME: await makeTempDir() });
    expect(r).toMatchObject({ code: 0 });
    const seen = JSON.parse(r.stdout.trim()) as { code: string; child: string; builds: string[] };
    expect(seen.code).toBe("production");
    expect(seen.child).toBe("unset");
    expect(seen.builds.length).toBeGreaterThanOrEqual(2);
    for (const build of seen.builds) expect(build).toContain(".production.");
  });
});

describe("bin/valarmind runs the JavaScript bundle while it is current (ADR 0086)", () => {
  const ROOT = resolve(import.meta.dir, "../..");

  /** A checkout of its own: the launcher, a copy of the source, the dependencies linked, a bundle built. */
  async function checkout(): Promise<string> {
    const dir = await makeTempDir("valarmind-bundle-");
    mkdirSync(join(dir, "bin"));
    copyFileSync(BIN, join(dir, "bin", "valarmind"));
    chmodSync(join(dir, "bin", "valarmind"), 0o755);
    cpSync(join(ROOT, "src"), join(dir, "src"), { recursive: true });
    for (const file of ["package.json", "bunfig.toml", "bun.lock"]) copyFileSync(join(ROOT, file), join(dir, file));
    symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
    mkdirSync(join(dir, ".git"));
    // Older than the bundle, as after a checkout and then scripts/setup.
    const past = new Date(Date.now() - 60_000);
    utimesSync(join(dir, "src", "cli", "main.ts"), past, past);
    await buildJsBundle(join(dir, "dist", "js"));
    return dir;
  }

  async function entryOf(dir: string, env: Record<string, string> = {}): Promise<string> {
    const r = await run([join(dir, "bin", "valarmind"), "--version"], { PATH: process.env.PATH ?? "", HOME: await makeTempDir(), VALARMIND_TRACE: "1", ...env });
    expect(r.stdout).toBe(`${pkg.version}\n`);
    const match = /main: modules loaded \((.*)\)/.exec(r.stderr);
    if (!match?.[1]) throw new Error(`no entry traced: ${r.stderr}`);
    return match[1].slice(dir.length);
  }

  test("fresh: the bundle, which answers a real chat -p; VALARMIND_FROM_SOURCE=1: the source", async () => {
    const dir = await checkout();
    expect(await entryOf(dir)).toBe("/dist/js/main.js");
    expect(await entryOf(dir, { VALARMIND_FROM_SOURCE: "1" })).toBe("/src/cli/main.ts");
    await using server = startFakeResponsesServer();
    server.enqueue(textStream("from the bundle"));
    const chat = await run([join(dir, "bin", "valarmind"), "chat", "-p", "hi"], { PATH: process.env.PATH ?? "", HOME: await makeTempDir(), OPENAI_BASE_URL: server.baseURL });
    expect(chat).toMatchObject({ code: 0, stdout: "from the bundle\n" });
  }, 30_000);

  test("a source file edited, or one removed, after the bundle was built: the source runs", async () => {
    const dir = await checkout();
    const future = new Date(Date.now() + 60_000);
    utimesSync(join(dir, "src", "cli", "main.ts"), future, future);
    expect(await entryOf(dir)).toBe("/src/cli/main.ts");

    const other = await checkout();
    rmSync(join(other, "src", "one-line.ts"));
    utimesSync(join(other, "src"), future, future);
    // The source then fails to load what was removed: what matters is that it is the source that runs.
    const r = await run([join(other, "bin", "valarmind"), "--version"], { PATH: process.env.PATH ?? "", HOME: await makeTempDir(), VALARMIND_TRACE: "1" });
    expect(r.stderr).not.toContain("/dist/js/main.js");
  }, 30_000);

  test("an installed package (no .git) runs its bundle whatever its files' times", async () => {
    const dir = await checkout();
    rmSync(join(dir, ".git"), { recursive: true });
    const future = new Date(Date.now() + 60_000);
    utimesSync(join(dir, "src", "cli", "main.ts"), future, future);
    expect(await entryOf(dir)).toBe("/dist/js/main.js");
  }, 30_000);
});
