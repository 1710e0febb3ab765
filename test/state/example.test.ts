import { afterAll, describe, expect, test } from "bun:test";
import { cp, readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { Value } from "@sinclair/typebox/value";
import { SettingsSchema } from "../../src/config/settings-schema.ts";
import { stateJsonSchema } from "../../src/state/schema.ts";
import { encodeStateToon } from "../../src/state/toon.ts";
import { validateState } from "../../src/state/validate.ts";
import { cleanupTempDirs, makeTempDir, runCli } from "../support/cli.ts";

afterAll(cleanupTempDirs);

const example = resolve(import.meta.dir, "../../.valarmind.example");
const read = (path: string) => readFile(join(example, path), "utf8");

describe(".valarmind.example", () => {
  test("state.json is valid, state.toon is its fresh projection, the schema is current", async () => {
    const state: unknown = JSON.parse(await read("memory/state.json"));
    const checked = validateState(state, "state.json");
    if (!checked.ok) throw new Error(checked.errors.join("\n"));
    const encoded = await encodeStateToon(checked.state);
    expect(await read("memory/state.toon")).toBe(`${encoded.toon}\n`);
    expect(encoded.tokens).toBeGreaterThanOrEqual(250);
    expect(encoded.tokens).toBeLessThanOrEqual(750);
    expect(JSON.parse(await read("memory/schemas/state.schema.json"))).toEqual(stateJsonSchema());
  });

  test("config.json holds valid settings", async () => {
    const config: unknown = JSON.parse(await read("config.json"));
    expect([...Value.Errors(SettingsSchema, config)].map((e) => `${e.path} ${e.message}`)).toEqual([]);
  });

  test("works as a real workspace: compact --check finds it up to date", async () => {
    const dir = await makeTempDir();
    await cp(example, join(dir, ".valarmind"), { recursive: true });
    const r = await runCli(["compact", "--check"], { cwd: dir });
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    expect(r.stdout).toContain("within the 250–750 token band");
  });
});

describe(".valarmind.example sessions", () => {
  test("the example transcript and its manifests are valid, and the manifests carry the API's usage", async () => {
    const { listSessions, readSession } = await import("../../src/session/transcript.ts");
    const { readManifests } = await import("../../src/prompt/manifest.ts");
    const { workspacePaths } = await import("../../src/config/paths.ts");
    const paths = { ...workspacePaths(example), sessionsDir: join(example, "sessions") };
    const [ref] = listSessions(paths);
    if (!ref) throw new Error("no example session");
    const { records, tornTail } = readSession(ref.file);
    expect(tornTail).toBeUndefined();
    expect(records.map((r) => r.kind)).toContain("tool_call");
    const manifests = await readManifests(ref.dir);
    expect(manifests.length).toBeGreaterThanOrEqual(2);
    for (const { manifest } of manifests) expect(manifest.usage?.input).toBeGreaterThan(0);
  });
});
