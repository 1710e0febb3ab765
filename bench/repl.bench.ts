/**
 * REPL benchmarks (issue 5 targets): time until the REPL is ready for input, streaming at 200
 * deltas per second (no dropped text, frames and key echo while streaming), and resident memory
 * after a 100-turn session. Each figure comes from a fresh process running
 * test/ui/fixtures/repl-probe.ts: the real `runRepl` on in-memory TTY streams with the fake
 * controller (the core's own start-up is not in these figures). The real-core memory row comes from
 * test/ui/fixtures/repl-probe-real.ts: the real SessionChatController and OpenAI client against the
 * fake Responses server in its own process, rendered by the same `runRepl`. Probes run with the JSC
 * settings and React production build of bin/valarmind (ADR 0065); "ready" of the real binary starts bin/valarmind itself.
 */
import { join } from "node:path";
import { median, type BenchContext, type BenchRow } from "./harness.ts";

const PROBE = join("test", "ui", "fixtures", "repl-probe.ts");
/** The JSC settings bin/valarmind runs with (ADR 0065); probes run the same way. */
const PRODUCT_ENV = { BUN_JSC_useBaselineJIT: "0" };
/** The flag bin/valarmind runs with: React's production build (defined in the code, not the environment). */
const PRODUCT_FLAGS = ["--define", 'process.env.NODE_ENV:"production"'];
const REAL_PROBE = join("test", "ui", "fixtures", "repl-probe-real.ts");

async function probe(ctx: BenchContext, mode: string, script = PROBE, env: Record<string, string> = PRODUCT_ENV): Promise<Record<string, number>> {
  const proc = Bun.spawn([process.execPath, ...PRODUCT_FLAGS, script, mode], { cwd: ctx.repoRoot, stdout: "pipe", stderr: "pipe", env: { ...process.env, ...env } });
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  if (code !== 0) throw new Error(`repl probe '${mode}' exited with ${code}: ${err}`);
  const line = out.trim().split("\n").at(-1) ?? "";
  return JSON.parse(line) as Record<string, number>;
}

/** Wall clock from spawning a fresh process to its "READY" line (bun start, imports, first frame). */
async function spawnToReady(ctx: BenchContext): Promise<number> {
  const started = performance.now();
  const proc = Bun.spawn([process.execPath, ...PRODUCT_FLAGS, PROBE, "ready"], { cwd: ctx.repoRoot, stdout: "pipe", stderr: "inherit", env: { ...process.env, ...PRODUCT_ENV } });
  const reader = proc.stdout.getReader();
  let seen = "";
  let readyAt = Number.NaN;
  while (Number.isNaN(readyAt)) {
    const { value, done } = await reader.read();
    if (done) break;
    seen += new TextDecoder().decode(value);
    if (seen.includes("READY")) readyAt = performance.now() - started;
  }
  reader.releaseLock();
  await proc.exited;
  if (Number.isNaN(readyAt)) throw new Error(`repl probe never printed READY: ${seen}`);
  return readyAt;
}

/**
 * Wall clock from spawning the real `valarmind chat` in a pseudo-terminal (util-linux `script`)
 * until its input prompt is drawn: bun start, settings, session open, tokenizer, ink, first frame.
 */
async function realChatToReady(ctx: BenchContext, cwd: string): Promise<number> {
  // The installed entry point (bin/valarmind, with its runtime settings), as a user starts it.
  const command = `'${join(ctx.repoRoot, "bin", "valarmind").replaceAll("'", "'\\''")}' chat`;
  const started = performance.now();
  const proc = Bun.spawn(["script", "-qfec", command, "/dev/null"], {
    cwd,
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, NO_COLOR: "1", TERM: "xterm-256color", OPENAI_BASE_URL: "http://127.0.0.1:9/v1" },
  });
  const reader = proc.stdout.getReader();
  let seen = "";
  let readyAt = Number.NaN;
  // A REPL that never draws its prompt fails the bench instead of hanging it.
  const deadline = setTimeout(() => proc.kill(), 15_000);
  while (Number.isNaN(readyAt)) {
    const { value, done } = await reader.read();
    if (done) break;
    seen += new TextDecoder().decode(value);
    if (seen.includes("Ask anything")) readyAt = performance.now() - started;
  }
  clearTimeout(deadline);
  reader.releaseLock();
  proc.stdin.write("\u0004");
  await proc.stdin.end();
  await proc.exited;
  if (Number.isNaN(readyAt)) throw new Error(`valarmind chat never drew its prompt: ${seen.slice(-500)} ${await new Response(proc.stderr).text()}`);
  return readyAt;
}

export async function run(ctx: BenchContext): Promise<BenchRow[]> {
  const runs = 9;
  const workspace = await ctx.tempDir();
  Bun.spawnSync(["git", "init", "-q", "."], { cwd: workspace });
  await realChatToReady(ctx, workspace); // warm the file and tokenizer caches
  const real: number[] = [];
  for (let i = 0; i < runs; i++) real.push(await realChatToReady(ctx, workspace));
  const wall: number[] = [];
  const inProcess: number[] = [];
  await spawnToReady(ctx); // warm the file cache
  for (let i = 0; i < runs; i++) wall.push(await spawnToReady(ctx));
  for (let i = 0; i < runs; i++) inProcess.push((await probe(ctx, "ready"))["importAndRenderMs"] ?? Number.NaN);
  const stream = await probe(ctx, "stream");
  const memory = await probe(ctx, "memory");
  const realMemory = await probe(ctx, "100", REAL_PROBE);
  // For comparison: the same session with JavaScriptCore's default JIT tiers.
  const realMemoryDefaultJit = await probe(ctx, "100", REAL_PROBE, {});
  const value = (record: Record<string, number>, key: string) => record[key] ?? Number.NaN;
  return [
    {
      name: "valarmind chat ready for input (real binary in a pseudo-terminal)",
      value: median(real),
      unit: "ms",
      target: { max: 300 },
      note: `median of ${runs}, min ${Math.min(...real).toFixed(0)} ms: spawn → the input prompt drawn (settings, session, tokenizer, ink)`,
    },
    {
      name: "REPL ready for input: process spawn → first frame",
      value: median(wall),
      unit: "ms",
      target: { max: 300 },
      note: `median of ${runs}; fake controller, so the core's own start-up is not included`,
    },
    {
      name: "REPL ready: import run-repl (ink, react, marked) + first frame, in process",
      value: median(inProcess),
      unit: "ms",
      note: `median of ${runs}; importing ink alone is about 90 ms of it`,
    },
    {
      name: "streaming at 200 deltas/s: delivered rate",
      value: value(stream, "deltasPerSecond"),
      unit: "count",
      target: { min: 190 },
      note: `${value(stream, "deltas")} deltas in ${value(stream, "streamSeconds").toFixed(1)} s, deltas per second`,
    },
    {
      name: "streaming at 200 deltas/s: answer lines missing from the screen",
      value: value(stream, "missingLines"),
      unit: "count",
      target: { max: 0 },
    },
    {
      name: "streaming at 200 deltas/s: frames per second",
      value: value(stream, "framesPerSecond"),
      unit: "count",
      note: "synchronized-update blocks ink wrote per second while streaming and typing",
    },
    {
      name: "streaming at 200 deltas/s: key echo, median",
      value: value(stream, "keyEchoMedianMs"),
      unit: "ms",
      target: { max: 50 },
      note: `typing one key per 50 ms while streaming; worst ${value(stream, "keyEchoMaxMs").toFixed(1)} ms`,
    },
    {
      name: "streaming at 200 deltas/s: worst event-loop stall",
      value: value(stream, "maxEventLoopLagMs"),
      unit: "ms",
      target: { max: 100 },
    },
    {
      name: "resident memory after a 100-turn session (fake controller)",
      value: value(memory, "rssMb") * 2 ** 20,
      unit: "bytes",
      target: { max: 150 * 2 ** 20 },
      note: `${value(memory, "rssMb").toFixed(0)} MB (${value(memory, "rssStartMb").toFixed(0)} MB at start); heap ${value(memory, "heapUsedMb").toFixed(0)} MB`,
    },
    {
      name: "resident memory after a 100-turn session, real core + REPL",
      value: value(realMemory, "rssMb") * 2 ** 20,
      unit: "bytes",
      target: { max: 150 * 2 ** 20 },
      note:
        `${value(realMemory, "rssMb").toFixed(0)} MB (${value(realMemory, "rssStartMb").toFixed(0)} MB at start): ` +
        `anonymous ${value(realMemory, "rssAnonMb").toFixed(0)} MB, file-backed ${value(realMemory, "rssFileMb").toFixed(0)} MB; ` +
        `heap ${value(realMemory, "heapUsedMb").toFixed(0)} MB (${value(realMemory, "heapStartMb").toFixed(0)} MB at start); ` +
        `${value(realMemory, "requests")} requests, ${value(realMemory, "toolCalls")} read_file calls; the fake model in its own process; ` +
        `with bin/valarmind's JIT settings (ADR 0065) — default JSC tiers: ${value(realMemoryDefaultJit, "rssMb").toFixed(0)} MB`,
    },
  ];
}
