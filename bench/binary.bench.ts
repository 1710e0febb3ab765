/**
 * The single executable (scripts/build.ts, ADR 0080): its build time, size, and start-up beside
 * bin/valarmind (Bun running the JavaScript bundle, and the source): `--version`, and one `chat -p` turn against the fake
 * Responses server. Also the npm package's size (`npm pack`). Timings are medians of fresh processes.
 */
import { copyFile } from "node:fs/promises";
import { join } from "node:path";
import { buildBinary } from "../scripts/build.ts";
import { startFakeResponsesServer, textStream } from "../test/support/fake-responses-server.ts";
import type { BenchContext, BenchRow } from "./harness.ts";

const MB = 1024 * 1024;

async function packRows(ctx: BenchContext): Promise<BenchRow[]> {
  const npm = Bun.which("npm");
  if (!npm) return [];
  const proc = Bun.spawn([npm, "pack", "--dry-run", "--json"], { cwd: ctx.repoRoot, stdout: "pipe", stderr: "ignore" });
  const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
  if (code !== 0) throw new Error(`npm pack --dry-run exited ${code}`);
  const [pack] = JSON.parse(out) as { entryCount: number; size: number; unpackedSize: number }[];
  if (!pack) throw new Error("npm pack --dry-run printed no result");
  return [
    { name: "npm package: files", value: pack.entryCount, unit: "count", note: "npm pack --dry-run; 540 before issue 14" },
    { name: "npm package: tarball", value: pack.size, unit: "bytes", note: `${(pack.unpackedSize / MB).toFixed(2)} MB unpacked; 818,111 bytes before issue 14` },
  ];
}

export async function run(ctx: BenchContext): Promise<BenchRow[]> {
  const started = performance.now();
  const built = await buildBinary(join(await ctx.tempDir(), "valarmind"));
  const buildMs = performance.now() - started;
  // Alone in an empty directory, as a user would download it.
  const dir = await ctx.tempDir();
  const binary = join(dir, "valarmind");
  await copyFile(built.path, binary);
  const home = await ctx.tempDir();
  const env = { HOME: home, XDG_CONFIG_HOME: join(home, ".config") };

  const rows: BenchRow[] = [
    { name: "single executable: size (this platform)", value: built.bytes, unit: "bytes", note: `${(built.bytes / MB).toFixed(1)} MB: Bun's runtime, bytecode, ranks, texts` },
    { name: "single executable: build", value: buildMs, unit: "ms", note: "scripts/build.ts, one platform" },
  ];
  const binVersion = await ctx.measureCommand([binary, "--version"], { cwd: dir, env, runs: 30, warmup: 5 });
  rows.push({ name: "dist/valarmind --version", value: binVersion.median_ms, unit: "ms", target: { max: 50 }, note: `median of ${binVersion.runs}, min ${binVersion.min_ms.toFixed(1)}` });
  const srcVersion = await ctx.measureCommand([...ctx.cli, "--version"], { cwd: dir, env, runs: 30, warmup: 5 });
  rows.push({ name: "bin/valarmind --version (same run)", value: srcVersion.median_ms, unit: "ms", note: `median of ${srcVersion.runs}, min ${srcVersion.min_ms.toFixed(1)}` });

  await using server = startFakeResponsesServer({ responder: () => textStream("ok") });
  const chatEnv = { ...env, OPENAI_BASE_URL: server.baseURL };
  for (const [label, argv] of [
    ["dist/valarmind chat -p (one turn, fake server)", [binary]],
    ["bin/valarmind chat -p (one turn, fake server), from the JavaScript bundle", ctx.cli],
    ["bin/valarmind chat -p (one turn, fake server), from the source (VALARMIND_FROM_SOURCE=1)", ctx.cli],
  ] as const) {
    const fromSource: Record<string, string> = label.includes("VALARMIND_FROM_SOURCE") ? { VALARMIND_FROM_SOURCE: "1" } : {};
    const t = await ctx.measureCommand([...argv, "chat", "-p", "hello"], { cwd: dir, env: { ...chatEnv, ...fromSource }, runs: 10, warmup: 2 });
    rows.push({ name: label, value: t.median_ms, unit: "ms", note: `median of ${t.runs}, min ${t.min_ms.toFixed(1)}; tokenizer cache warm` });
  }
  return [...rows, ...(await packRows(ctx))];
}
