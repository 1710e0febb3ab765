import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildRequest } from "../../src/prompt/builder.ts";
import { diffManifests } from "../../src/prompt/manifest-diff.ts";
import type { Manifest } from "../../src/prompt/manifest-schema.ts";
import { listManifestFiles, manifestJsonSchema, readManifest, readManifests, recordApiCount, recordUsage, validateManifest, writeManifest } from "../../src/prompt/manifest.ts";
import { cleanupTempDirs, makeTempDir } from "../support/cli.ts";
import { fullInput } from "./support/build-fixture.ts";

afterAll(cleanupTempDirs);

async function sample(overrides = {}): Promise<Manifest> {
  return (await buildRequest(await fullInput(overrides))).manifest;
}

describe("manifest schema", () => {
  test("a built manifest is valid and has every field the architecture names", async () => {
    const m = await sample();
    await expect(validateManifest(m, "built")).resolves.toBe(m);
    for (const key of ["timestamp", "session", "turn", "model", "budget_tokens", "total_tokens", "stable_prefix_tokens", "prompt_cache_key", "items", "dropped", "cutoff_steps"]) {
      expect(key in m).toBe(true);
    }
    expect(Object.keys(m.items[0] ?? {}).sort()).toEqual(["detail", "format", "hash", "id", "placement", "reason", "region", "stable", "tokens", "type"]);
    expect(manifestJsonSchema().title).toBe("valarmind prompt manifest");
  });

  test("rejects what does not match, naming the file and field", async () => {
    const m = await sample();
    await expect(validateManifest({ ...m, total_tokens: -1 }, "x.json")).rejects.toThrow("x.json: invalid manifest: /total_tokens must be >= 0");
    await expect(validateManifest({ ...m, extra: 1 }, "x.json")).rejects.toThrow(/must NOT have additional properties/);
    await expect(validateManifest({ ...m, items: [{ ...m.items[0], hash: "nothex" }] }, "x.json")).rejects.toThrow(/\/items\/0\/hash/);
    await expect(validateManifest({ ...m, timestamp: "yesterday" }, "x.json")).rejects.toThrow(/timestamp must match format "date-time"/);
  });
});

describe("manifest files", () => {
  test("written under the session directory as <turn>-<step>.json, never overwritten, listed in call order", async () => {
    const dir = join(await makeTempDir(), "sessions", "test1234");
    const m1 = await sample();
    const p1 = await writeManifest(dir, { ...m1, turn: 3, step: 2 });
    const p2 = await writeManifest(dir, { ...m1, turn: 3, step: 2 });
    const p3 = await writeManifest(dir, { ...m1, turn: 10, step: 1 });
    const p4 = await writeManifest(dir, { ...m1, turn: 3, step: 1, purpose: "summary" });
    expect(p1).toBe(join(dir, "manifests", "0003-02.json"));
    expect(p2).toBe(join(dir, "manifests", "0003-02-2.json"));
    expect(p4).toBe(join(dir, "manifests", "0003-01-summary.json"));
    expect(await listManifestFiles(dir)).toEqual([p4, p1, p2, p3]);
    expect((await readManifests(dir)).map((x) => x.manifest.turn)).toEqual([3, 3, 3, 10]);
  });

  test("usage and the API's count are recorded after the call", async () => {
    const dir = join(await makeTempDir(), "s");
    const path = await writeManifest(dir, await sample());
    await recordUsage(path, { input: 9000, cached: 8192, output: 120, reasoning: 64 });
    await recordApiCount(path, 9001);
    const m = await readManifest(path);
    expect(m.usage).toEqual({ input: 9000, cached: 8192, output: 120, reasoning: 64 });
    expect(m.api_input_tokens).toBe(9001);
  });

  test("a damaged manifest is reported with its path", async () => {
    const dir = join(await makeTempDir(), "s");
    const path = await writeManifest(dir, await sample());
    writeFileSync(path, readFileSync(path, "utf8").replace('"session"', '"sessio"'));
    await expect(readManifest(path)).rejects.toThrow(`${path}: invalid manifest`);
    writeFileSync(path, "{");
    await expect(readManifest(path)).rejects.toThrow(`${path}: cannot read the manifest`);
  });
});

describe("manifest diff", () => {
  test("reports added, removed and changed items and the unchanged prefix", async () => {
    const a = await sample();
    const b = await sample({ turn: 37, task: { userText: "something else entirely", items: [] }, budgetTokens: a.total_tokens - 100 });
    const diff = diffManifests(a, b);
    expect(diff.changes).toContainEqual(expect.objectContaining({ id: "task:message", change: "changed" }));
    expect(diff.changes).toContainEqual(expect.objectContaining({ id: "working_state", change: "changed" }));
    // The state snapshot (trimmed to the lower budget) is the first change: what precedes it is unchanged.
    const firstChanged = a.items.findIndex((i) => i.id === "working_state");
    expect(firstChanged).toBeGreaterThan(0);
    expect(diff.unchangedPrefixTokens).toBe(a.items.slice(0, firstChanged).reduce((n, i) => n + i.tokens, 0));
    expect(diff.unchangedPrefixShare).toBeGreaterThan(0);
    expect(diffManifests(a, a).changes).toEqual([]);
  });
});
