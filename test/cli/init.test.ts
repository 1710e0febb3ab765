import { afterAll, describe, expect, test } from "bun:test";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { stateJsonSchema } from "../../src/state/schema.ts";
import { cleanupTempDirs, makeTempDir, runCli } from "../support/cli.ts";

afterAll(cleanupTempDirs);

describe("valarmind init", () => {
  test("creates the workspace, a valid empty state, the schema and .gitignore entries", async () => {
    const dir = await makeTempDir();
    const r = await runCli(["init"], { cwd: dir });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    for (const line of ["created .valarmind/memory/", "created .valarmind/sessions/", "created .valarmind/cache/", "created VALARMIND.md", "created .valarmind/memory/state.json"]) {
      expect(r.stdout).toContain(line);
    }
    const state = JSON.parse(await readFile(join(dir, ".valarmind/memory/state.json"), "utf8"));
    expect(state).toMatchObject({ schema_version: 1, goal: "", tasks_open: [], blockers: [], conventions: {} });
    const schema = JSON.parse(await readFile(join(dir, ".valarmind/memory/schemas/state.schema.json"), "utf8"));
    expect(schema).toEqual(stateJsonSchema());
    expect(schema.$schema).toBe("https://json-schema.org/draft/2020-12/schema");
    expect(await readFile(join(dir, ".gitignore"), "utf8")).toBe("# valarmind: local memory and personal instructions\n.valarmind/\nVALARMIND.local.md\n");
    expect(await readFile(join(dir, "VALARMIND.md"), "utf8")).toContain("# Project instructions for valarmind");
  });

  test("is idempotent: a second run changes no file", async () => {
    const dir = await makeTempDir();
    await runCli(["init"], { cwd: dir });
    const files = [".gitignore", "VALARMIND.md", ".valarmind/memory/state.json", ".valarmind/memory/schemas/state.schema.json"];
    const before = await Promise.all(files.map((f) => readFile(join(dir, f), "utf8")));
    const r = await runCli(["init"], { cwd: dir });
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain("created");
    expect(await Promise.all(files.map((f) => readFile(join(dir, f), "utf8")))).toEqual(before);
  });

  test("never overwrites the user's files and appends only missing .gitignore lines", async () => {
    const dir = await makeTempDir();
    await writeFile(join(dir, "VALARMIND.md"), "# mine\n");
    await writeFile(join(dir, ".gitignore"), "node_modules\n/.valarmind\n");
    const r = await runCli(["init"], { cwd: dir });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("kept VALARMIND.md");
    expect(await readFile(join(dir, "VALARMIND.md"), "utf8")).toBe("# mine\n");
    expect(await readFile(join(dir, ".gitignore"), "utf8")).toBe(
      "node_modules\n/.valarmind\n\n# valarmind: local memory and personal instructions\nVALARMIND.local.md\n",
    );
  });

  test("a .gitignore without a final newline stays intact", async () => {
    const dir = await makeTempDir();
    await writeFile(join(dir, ".gitignore"), "dist");
    await runCli(["init"], { cwd: dir });
    expect(await readFile(join(dir, ".gitignore"), "utf8")).toBe(
      "dist\n\n# valarmind: local memory and personal instructions\n.valarmind/\nVALARMIND.local.md\n",
    );
  });

  test("keeps an existing state and moves a corrupt one aside with a notice", async () => {
    const dir = await makeTempDir();
    await runCli(["init"], { cwd: dir });
    await runCli(["state", "goal", "keep me"], { cwd: dir });
    expect((await runCli(["init"], { cwd: dir })).stdout).toContain("kept .valarmind/memory/state.json");
    expect(JSON.parse(await readFile(join(dir, ".valarmind/memory/state.json"), "utf8")).goal).toBe("keep me");
    await writeFile(join(dir, ".valarmind/memory/state.json"), "{oops");
    const r = await runCli(["init"], { cwd: dir });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("state.json was not valid JSON");
    expect(r.stderr).toContain("state.json.corrupt-");
  });

  test("a file where .valarmind/ should be is reported, not overwritten", async () => {
    const dir = await makeTempDir();
    await writeFile(join(dir, ".valarmind"), "mine");
    const r = await runCli(["init"], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`cannot create the directory ${join(dir, ".valarmind")}`);
    expect(r.stderr).toContain("A file may be in the way");
    expect(await readFile(join(dir, ".valarmind"), "utf8")).toBe("mine");
  });
});
