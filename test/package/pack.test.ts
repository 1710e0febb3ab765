/**
 * The npm package: `npm pack` ships what runs and nothing else (no tests, benchmarks, fixtures,
 * ADRs), every import of a shipped file is shipped or a dependency, and, with
 * VALARMIND_TEST_INSTALL=1 (dependencies come from the npm registry; .ci/run sets it), the packed
 * tarball installed with `npm install -g` and `bun add -g` runs `--version` and `chat -p`.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, realpathSync } from "node:fs";
import { dirname, join, normalize, resolve } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { cleanupTempDirs, makeTempDir } from "../support/cli.ts";
import { startFakeResponsesServer, textStream, lastUserText } from "../support/fake-responses-server.ts";

const ROOT = resolve(import.meta.dir, "../..");
const NPM = Bun.which("npm");
const INSTALL = process.env.VALARMIND_TEST_INSTALL === "1";
afterAll(cleanupTempDirs);

interface PackResult {
  filename: string;
  entryCount: number;
  size: number;
  unpackedSize: number;
  files: { path: string; size: number }[];
}

async function npm(args: string[], cwd: string, env: Record<string, string | undefined> = {}): Promise<string> {
  if (!NPM) throw new Error("npm is not installed");
  const proc = Bun.spawn([NPM, ...args], { cwd, env: { ...process.env, ...env }, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`npm ${args.join(" ")} exited ${code}\n${stderr}`);
  return stdout;
}

async function pack(destination?: string): Promise<PackResult> {
  const args = destination ? ["pack", "--json", "--pack-destination", destination] : ["pack", "--dry-run", "--json"];
  const [result] = JSON.parse(await npm(args, ROOT)) as PackResult[];
  if (!result) throw new Error("npm pack printed no result");
  return result;
}

/** `@scope/name/sub` → `@scope/name`; `name/sub` → `name`. */
function packageName(specifier: string): string {
  const parts = specifier.split("/");
  return (specifier.startsWith("@") ? parts.slice(0, 2) : parts.slice(0, 1)).join("/");
}

describe.skipIf(!NPM)("npm pack", () => {
  test("ships the launcher, the JavaScript bundle (npm pack builds it), the source, the texts, the generated validators and the template; no tests, benchmarks, fixtures, ADRs, binaries or a second rank file", async () => {
    const packed = await pack();
    const paths = packed.files.map((f) => f.path);
    for (const needed of [
      "package.json",
      "README.md",
      "LICENSE",
      "bunfig.toml",
      "bin/valarmind",
      "dist/js/main.js",
      "src/cli/main.ts",
      "src/prompt/text/core-rules.md",
      "src/tools/text/read_file.md",
      "src/state/templates/VALARMIND.md",
      "src/state/generated/state-validator.js",
      "src/prompt/generated/manifest-validator.js",
    ]) {
      expect(paths).toContain(needed);
    }
    const unwanted = paths.filter(
      (p) =>
        /^(test|bench|scripts|node_modules|\.ci|\.valarmind[^/]*)\//.test(p) ||
        (p.startsWith("dist/") && !p.startsWith("dist/js/")) ||
        /\.tiktoken$/.test(p) ||
        p.startsWith("docs/adr/") ||
        /(^|\/)fixtures?\//.test(p) ||
        /\.(test|bench)\.tsx?$/.test(p) ||
        /-build\.ts$/.test(p) ||
        p === "bun.lock" ||
        p === "VALARMIND.md",
    );
    expect(unwanted).toEqual([]);
  });

  test("every import of a shipped source file is shipped too, or a runtime dependency", async () => {
    const shipped = new Set((await pack()).files.map((f) => f.path));
    const dependencies = new Set(Object.keys(pkg.dependencies));
    const missing: string[] = [];
    for (const file of shipped) {
      if (!/^src\/.*\.(ts|tsx|js)$/.test(file) || file.endsWith(".d.ts")) continue;
      const loader = file.endsWith(".tsx") ? "tsx" : file.endsWith(".js") ? "js" : "ts";
      for (const { path: specifier } of new Bun.Transpiler({ loader }).scanImports(readFileSync(join(ROOT, file), "utf8"))) {
        if (specifier.startsWith(".")) {
          const target = normalize(join(dirname(file), specifier));
          if (!shipped.has(target)) missing.push(`${file} → ${specifier}`);
        } else if (!/^(node|bun):/.test(specifier) && specifier !== "bun" && !dependencies.has(packageName(specifier))) {
          // "bun" (Bun's own module: RedisClient, …) is built in, like node: and bun: imports.
          missing.push(`${file} → ${specifier} (not in dependencies)`);
        }
      }
    }
    expect(missing).toEqual([]);
  });
});

/** Runs an installed `valarmind` with a fresh HOME and config, against a fake Responses server. */
async function expectWorkingInstall(entry: string, env: Record<string, string> = {}) {
  const home = await makeTempDir();
  const cwd = await makeTempDir();
  const base = { PATH: process.env.PATH ?? "", HOME: home, XDG_CONFIG_HOME: join(home, ".config"), NO_COLOR: "1", ...env };
  const run = async (args: string[], extra: Record<string, string> = {}) => {
    const proc = Bun.spawn([entry, ...args], { cwd, env: { ...base, ...extra }, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    return { code, stdout, stderr };
  };
  expect(await run(["--version"])).toEqual({ code: 0, stdout: `${pkg.version}\n`, stderr: "" });
  // The installed package starts from its bundle (ADR 0086): npm gives every file the same time, so none is newer.
  expect((await run(["--version"], { VALARMIND_TRACE: "1" })).stderr).toContain("/dist/js/main.js)");
  await using server = startFakeResponsesServer();
  server.enqueue(textStream("Installed and answering."));
  const chat = await run(["chat", "-p", "are you installed?"], { OPENAI_BASE_URL: server.baseURL });
  expect(chat).toMatchObject({ code: 0, stdout: "Installed and answering.\n" });
  expect(lastUserText(server.requests[0]?.body ?? {})).toBe("are you installed?");
}

describe.skipIf(!NPM || !INSTALL)("the packed tarball, installed (VALARMIND_TEST_INSTALL=1)", () => {
  let tarball: string | undefined;
  async function packedTarball(): Promise<string> {
    if (!tarball) {
      const out = await makeTempDir();
      tarball = join(out, (await pack(out)).filename);
    }
    return tarball;
  }

  test("npm install -g --prefix: the bin link resolves into the package, and it runs --version and chat -p", async () => {
    const prefix = await makeTempDir();
    await npm(["install", "-g", "--prefix", prefix, "--no-audit", "--no-fund", await packedTarball()], prefix);
    const entry = join(prefix, "bin/valarmind");
    expect(realpathSync(entry)).toBe(join(realpathSync(prefix), "lib/node_modules/valarmind/bin/valarmind"));
    await expectWorkingInstall(entry);
  }, 240_000);

  test("bun add -g with BUN_INSTALL: it runs --version and chat -p", async () => {
    const bunInstall = await makeTempDir();
    const tgz = await packedTarball();
    const proc = Bun.spawn([process.execPath, "add", "-g", tgz], {
      cwd: bunInstall,
      env: { ...process.env, BUN_INSTALL: bunInstall },
      stdout: "pipe",
      stderr: "pipe",
    });
    const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
    expect({ code, stderr: code === 0 ? "" : stderr }).toEqual({ code: 0, stderr: "" });
    const entry = join(bunInstall, "bin/valarmind");
    expect(realpathSync(entry)).toBe(join(realpathSync(bunInstall), "install/global/node_modules/valarmind/bin/valarmind"));
    await expectWorkingInstall(entry, { BUN_INSTALL: bunInstall });
  }, 240_000);
});
