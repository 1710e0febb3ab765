/**
 * Write latency of the two state stores under contention: 10 writers at once, each adding 20
 * tasks one after another (200 locked read-modify-write cycles per store), file store beside a
 * Redis store on a local redis-server (skipped, with a row saying so, when none is installed).
 * Each latency is one `update` call: lock wait, read, op, validation, write, release; the Redis
 * store also opens its connection per call, as a CLI command does.
 */
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { workspacePaths, type WorkspacePaths } from "../src/config/paths.ts";
import * as ops from "../src/state/ops.ts";
import { FileStateStore, type StateStore } from "../src/state/store.ts";
import { RedisStateStore } from "../src/store/redis-state-store.ts";
import { REDIS_BINARY, startRedis } from "../test/store/redis-server.ts";
import type { BenchContext, BenchRow } from "./harness.ts";

const WRITERS = 10;
const WRITES_EACH = 20;

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

async function measure(makeStore: () => StateStore): Promise<{ p50: number; p99: number; total: number }> {
  const latencies: number[] = [];
  await Promise.all(
    Array.from({ length: WRITERS }, async (_, w) => {
      const store = makeStore();
      for (let i = 0; i < WRITES_EACH; i++) {
        const started = performance.now();
        await store.update((s) => ops.addTask(s, `writer ${w} task ${i}`, {}));
        latencies.push(performance.now() - started);
      }
    }),
  );
  const sorted = latencies.sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), total: sorted.length };
}

async function workspace(ctx: BenchContext): Promise<WorkspacePaths> {
  const paths = workspacePaths(await ctx.tempDir());
  await mkdir(paths.memoryDir, { recursive: true });
  return paths;
}

export async function run(ctx: BenchContext): Promise<BenchRow[]> {
  const note = `${WRITERS} concurrent writers × ${WRITES_EACH} writes`;
  const filePaths = await workspace(ctx);
  const file = await measure(() => new FileStateStore(filePaths));
  const rows: BenchRow[] = [
    { name: "file store: write latency p50", value: file.p50, unit: "ms", note },
    { name: "file store: write latency p99", value: file.p99, unit: "ms", note },
  ];
  if (!REDIS_BINARY) return [...rows, { name: "redis store: skipped (redis-server not installed)", value: 0, unit: "count" }];
  const dir = await ctx.tempDir();
  const server = await startRedis(dir);
  try {
    const redisPaths = await workspace(ctx);
    const redis = await measure(() => new RedisStateStore(redisPaths, server.url, { projectId: "bench" }));
    rows.push(
      { name: "redis store: write latency p50", value: redis.p50, unit: "ms", note: `${note}; local redis-server, a connection per write` },
      { name: "redis store: write latency p99", value: redis.p99, unit: "ms", note: `${note}; lock wait included` },
    );
  } finally {
    await server.stop();
  }
  return rows;
}
