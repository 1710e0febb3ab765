#!/usr/bin/env bun
/**
 * `bun run build`: valarmind as one executable (Bun's runtime, the code, the prompt texts and the
 * o200k ranks in a single file; docs/adr/0080-package-and-single-binary.md).
 *
 *   bun scripts/build.ts                 # dist/valarmind for this machine, then dist/valarmind-<platform> for each of
 *                                        # linux-x64, linux-arm64, darwin-arm64 (cross-compiled)
 *   bun scripts/build.ts --host          # dist/valarmind only
 *   bun scripts/build.ts --outdir DIR    # somewhere else than dist/
 *   bun scripts/build.ts --js [--clean]  # dist/js/: the code as one JavaScript bundle (chunks for what
 *                                        # loads lazily), which bin/valarmind runs while it is newer
 *                                        # than every source file (ADR 0086); scripts/setup and npm pack build it
 *                                        # (--clean: without the chunks of earlier builds, for npm pack)
 *
 * Cross-compiling fetches that platform's Bun runtime from the npm registry once (then it is cached
 * in ~/.bun/install/cache). A platform that cannot be built is reported with the reason and skipped;
 * the exit code is 1 only when the binary for this machine could not be built.
 */
import { linkSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import type { BunPlugin } from "bun";

const ROOT = resolve(import.meta.dir, "..");
const ENTRY = join(ROOT, "src/cli/main.ts");

/** The platforms released as single executables, as `dist/valarmind-<platform>`. */
export const PLATFORMS = ["linux-x64", "linux-arm64", "darwin-arm64"] as const;
export type Platform = (typeof PLATFORMS)[number];

/**
 * ink imports `react-devtools-core` (an optional peer, not installed) from a module it loads only
 * when DEV=true and the package resolves; the bundler still has to resolve it. An empty module in
 * its place: in the executable `import.meta.resolve` finds no such package, so devtools stay off.
 */
const devtoolsStub: BunPlugin = {
  name: "react-devtools-core-stub",
  setup(build) {
    build.onResolve({ filter: /^react-devtools-core$/ }, () => ({ path: "react-devtools-core", namespace: "valarmind-stub" }));
    build.onLoad({ filter: /.*/, namespace: "valarmind-stub" }, () => ({
      contents: "export default { initialize() {}, connectToDevTools() {} };",
      loader: "js",
    }));
  },
};

/**
 * The oldest Bun this build was verified with. Older ones either refuse ESM bytecode (1.3.0) or may
 * not know the autoload options and would build a binary that loads a repository's `.env`.
 */
export const MIN_BUILD_BUN = "1.4.5";

export interface BuiltBinary {
  path: string;
  bytes: number;
  ms: number;
}

/**
 * Compiles src/cli/main.ts into `outfile`, for `platform` (default: this machine). Throws with Bun's
 * messages when the build fails.
 */
export async function buildBinary(outfile: string, platform?: Platform): Promise<BuiltBinary> {
  if (!Bun.semver.satisfies(Bun.version, `>=${MIN_BUILD_BUN}`)) {
    throw new Error(`building the single executable needs Bun ${MIN_BUILD_BUN} or later (this is ${Bun.version}); upgrade with 'bun upgrade'`);
  }
  const started = performance.now();
  const result = await Bun.build({
    entrypoints: [ENTRY],
    plugins: [devtoolsStub],
    minify: true,
    // Precompiled bytecode: `--version` starts in ~22 ms instead of ~115 ms (parsing the bundle),
    // for ~8 MB more. ESM keeps the entry's top-level await.
    bytecode: true,
    format: "esm",
    // React's production build, as bin/valarmind defines it: in the code, not the environment
    // (commands valarmind runs must not inherit NODE_ENV=production).
    define: { "process.env.NODE_ENV": JSON.stringify("production") },
    throw: false,
    compile: {
      outfile,
      ...(platform !== undefined ? { target: `bun-${platform}` as const } : {}),
      // Security (docs/security.md): the user's repository is the working directory, and its
      // `.env` or `bunfig.toml` must never be loaded; bin/valarmind passes the same as flags.
      autoloadDotenv: false,
      autoloadBunfig: false,
      autoloadTsconfig: false,
      autoloadPackageJson: false,
    },
  });
  if (!result.success) {
    throw new Error(result.logs.map((log) => String(log)).join("\n") || "bun build --compile failed without a message");
  }
  return { path: outfile, bytes: statSync(outfile).size, ms: performance.now() - started };
}

/**
 * The code as a JavaScript bundle in `outdir` (`main.js` and its lazily loaded chunks), run by
 * Bun like the source: about 60 ms less per start than resolving and transpiling ~300 modules
 * (ADR 0086). Dependencies are inside it, the prompt texts too; the o200k rank file is not.
 */
export async function buildJsBundle(outdir: string, options: { clean?: boolean } = {}): Promise<{ path: string; ms: number }> {
  const started = performance.now();
  const staging = `${outdir}.tmp-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  const result = await Bun.build({
    entrypoints: [ENTRY],
    outdir: staging,
    target: "bun",
    format: "esm",
    // Chunks for what loads lazily (ink and react for the REPL, openai for a chat): `--version`
    // parses 17 KB, not 3 MB (one file: 115 ms instead of 40, and a chat turn 50 ms slower).
    splitting: true,
    plugins: [devtoolsStub],
    // The 3.6 MB rank file stays where the gpt-tokenizer dependency put it (node_modules, beside
    // the bundle in a clone and in an npm install) instead of a second copy in the package.
    external: ["gpt-tokenizer/data/o200k_base.tiktoken"],
    minify: { whitespace: true, syntax: true, identifiers: false },
    define: { "process.env.NODE_ENV": JSON.stringify("production") },
    naming: { entry: "[name].[ext]", chunk: "[name]-[hash].[ext]", asset: "[name]-[hash].[ext]" },
    throw: false,
  });
  if (!result.success) {
    rmSync(staging, { recursive: true, force: true });
    throw new Error(result.logs.map((log) => String(log)).join("\n") || "bun build failed without a message");
  }
  // Chunks first (their names carry their content's hash), then main.js by rename: a valarmind
  // starting meanwhile runs the old bundle or the new one whole. Old chunks stay a day, for a
  // REPL started from the old main.js that has yet to load one lazily; `clean` (npm pack) drops them.
  mkdirSync(outdir, { recursive: true });
  const fresh = readdirSync(staging);
  for (const name of fresh) if (name !== "main.js") renameSync(join(staging, name), join(outdir, name));
  renameSync(join(staging, "main.js"), join(outdir, "main.js"));
  rmSync(staging, { recursive: true, force: true });
  const dayAgo = Date.now() - 24 * 60 * 60 * 1000;
  for (const name of readdirSync(outdir)) {
    if (fresh.includes(name)) continue;
    if (options.clean || statSync(join(outdir, name)).mtimeMs < dayAgo) rmSync(join(outdir, name), { recursive: true, force: true });
  }
  return { path: join(outdir, "main.js"), ms: performance.now() - started };
}

/** This machine as one of PLATFORMS, or undefined when it is not one of them. */
export function hostPlatform(): Platform | undefined {
  const name = `${process.platform}-${process.arch}`;
  return PLATFORMS.find((p) => p === name);
}

function describe(built: BuiltBinary): string {
  return `${relative(process.cwd(), built.path) || built.path}  ${(built.bytes / 1024 / 1024).toFixed(1)} MB  ${Math.round(built.ms)} ms`;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: { host: { type: "boolean", default: false }, js: { type: "boolean", default: false }, clean: { type: "boolean", default: false }, outdir: { type: "string", default: join(ROOT, "dist") } },
  });
  const outdir = resolve(values.outdir);
  mkdirSync(outdir, { recursive: true });
  if (values.js) {
    try {
      const built = await buildJsBundle(join(outdir, "js"), { clean: values.clean });
      // On stderr: npm runs this as `prepack`, and `npm pack --json` must print only its JSON.
      process.stderr.write(`built ${relative(process.cwd(), built.path) || built.path}  ${Math.round(built.ms)} ms\n`);
      return 0;
    } catch (error) {
      process.stderr.write(`valarmind build: could not build the JavaScript bundle:\n${error instanceof Error ? error.message : String(error)}\n`);
      return 1;
    }
  }
  const hostFile = join(outdir, "valarmind");
  let host: BuiltBinary;
  try {
    host = await buildBinary(hostFile);
  } catch (error) {
    process.stderr.write(`valarmind build: could not build ${hostFile}:\n${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
  process.stdout.write(`built ${describe(host)}\n`);
  if (values.host) return 0;

  const skipped: string[] = [];
  const native = hostPlatform();
  for (const platform of PLATFORMS) {
    const outfile = join(outdir, `valarmind-${platform}`);
    rmSync(outfile, { force: true });
    if (platform === native) {
      // The same file as dist/valarmind; a hard link costs no space.
      linkSync(hostFile, outfile);
      process.stdout.write(`built ${describe({ ...host, path: outfile, ms: 0 })} (this machine: same file as ${relative(process.cwd(), hostFile)})\n`);
      continue;
    }
    try {
      process.stdout.write(`built ${describe(await buildBinary(outfile, platform))}\n`);
    } catch (error) {
      const reason = (error instanceof Error ? error.message : String(error)).split("\n")[0];
      skipped.push(platform);
      process.stderr.write(
        `valarmind build: skipped ${platform}: ${reason}\n` +
          `  Cross-compiling downloads Bun's ${platform} runtime from the npm registry; without network access, run 'bun run build' on a ${platform} machine.\n`,
      );
    }
  }
  if (skipped.length > 0) process.stderr.write(`valarmind build: not built: ${skipped.join(", ")}\n`);
  return 0;
}

if (import.meta.main) process.exit(await main());
