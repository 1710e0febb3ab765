/** The installed entry point: bin/valarmind works directly and through a symlink (bun link). */
import { afterAll, describe, expect, test } from "bun:test";
import { symlinkSync } from "node:fs";
import { join, resolve } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { cleanupTempDirs, makeTempDir } from "../support/cli.ts";

const BIN = resolve(import.meta.dir, "../../bin/valarmind");
afterAll(cleanupTempDirs);

async function run(argv: string[], cwd: string) {
  const proc = Bun.spawn(argv, { cwd, stdout: "pipe", stderr: "pipe", env: { ...process.env, NO_COLOR: "1" } });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, code };
}

describe("bin/valarmind", () => {
  test("prints the version, directly and through a symlink elsewhere", async () => {
    const dir = await makeTempDir();
    const link = join(dir, "valarmind");
    symlinkSync(BIN, link);
    for (const entry of [BIN, link]) {
      const r = await run([entry, "--version"], dir);
      expect(r.code).toBe(0);
      expect(r.stdout.trim()).toBe(pkg.version);
    }
  });

  test("an unknown command is a usage error (exit 2) with a hint", async () => {
    const r = await run([BIN, "bogus"], await makeTempDir());
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unknown command 'bogus'");
    expect(r.stderr).toContain("valarmind --help");
  });
});
