/**
 * Crash-safe file replacement: write a temp file beside the target, fsync it, rename it over the
 * target, fsync the directory. A reader (or a crash) sees the old file or the new one, never half.
 * Every caller writes valarmind's own files (state, manifests, the folder-trust list), which are
 * private: the result is 0600.
 */
import { open, rename, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { PRIVATE_FILE_MODE } from "../config/valarmind-dir.ts";
import { fileSystemFailure } from "./fs-failure.ts";

/** Test-only: when set to "1", the writer announces the temp file on stderr and waits to be killed. */
export const HOLD_AFTER_TEMP_ENV = "VALARMIND_TEST_HOLD_AFTER_TEMP";

export function tempPathFor(target: string): string {
  const suffix = `${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
  return join(dirname(target), `${basename(target)}.tmp-${suffix}`);
}

async function fsyncDirectory(dir: string): Promise<void> {
  // Windows cannot open a directory for fsync; elsewhere the rename is durable only after this.
  if (process.platform === "win32") return;
  const handle = await open(dir, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function holdForTest(temp: string): Promise<never> {
  process.stderr.write(`valarmind-test: temp written ${temp}\n`);
  return new Promise<never>(() => {
    setInterval(() => {}, 60_000);
  });
}

export async function writeFileAtomic(target: string, data: string, beforeRename?: () => void): Promise<void> {
  const temp = tempPathFor(target);
  try {
    const handle = await open(temp, "wx", PRIVATE_FILE_MODE);
    try {
      await handle.writeFile(data, "utf8");
      await handle.sync();
    } finally {
      await handle.close();
    }
    if (process.env[HOLD_AFTER_TEMP_ENV] === "1") await holdForTest(temp);
    beforeRename?.();
    await rename(temp, target);
  } catch (error) {
    await rm(temp, { force: true });
    throw fileSystemFailure(error, "write", target) ?? error;
  }
  await fsyncDirectory(dirname(target));
}
