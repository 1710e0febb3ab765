/**
 * Folder trust (docs/security.md): settings a repository ships (`.valarmind/config.json` today)
 * apply only in a folder the user trusted. The user's answers live in their own config directory
 * (`$XDG_CONFIG_HOME/valarmind/trusted-folders.json`), never in the repository, so a clone cannot
 * trust itself. Keys are workspace roots as real paths.
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { Type, type Static } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { describeError, UsageError } from "../errors.ts";
import { writeFileAtomic } from "../state/atomic-write.ts";
import { acquireLock } from "../state/lock.ts";
import { userConfigDir } from "./user-config-dir.ts";
import { linkTarget } from "./link-target.ts";

export type TrustLevel = "trusted" | "untrusted";

const TrustFileSchema = Type.Object(
  {
    version: Type.Literal(1),
    folders: Type.Record(
      Type.String({ minLength: 1 }),
      Type.Object(
        { trust: Type.Union([Type.Literal("trusted"), Type.Literal("untrusted")]), decided_at: Type.String() },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
type TrustFile = Static<typeof TrustFileSchema>;

export function trustFilePath(): string {
  return join(userConfigDir(), "trusted-folders.json");
}

function readTrustFile(file: string): TrustFile {
  if (!existsSync(file)) return { version: 1, folders: {} };
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, "utf8").replace(/^\uFEFF/, ""));
  } catch (error) {
    throw new UsageError(`${file}: not valid JSON (${describeError(error)})`, {
      hint: "Fix the file, or delete it: every folder is then untrusted until you trust it again ('valarmind trust').",
    });
  }
  const first = [...Value.Errors(TrustFileSchema, parsed)][0];
  if (first) {
    throw new UsageError(`${file}: ${first.path || "/"} ${first.message}`, {
      hint: "Fix the file, or delete it: every folder is then untrusted until you trust it again ('valarmind trust').",
    });
  }
  return parsed as TrustFile;
}

/** The stored decision for a workspace root, or undefined when the user was never asked. */
export function storedTrust(root: string): TrustLevel | undefined {
  return readTrustFile(trustFilePath()).folders[root]?.trust;
}

/** All stored decisions, for `valarmind trust --list`. */
export function listTrust(): Array<{ root: string; trust: TrustLevel; decidedAt: string }> {
  const file = readTrustFile(trustFilePath());
  return Object.entries(file.folders)
    .map(([root, entry]) => ({ root, trust: entry.trust, decidedAt: entry.decided_at }))
    .sort((a, b) => a.root.localeCompare(b.root));
}

/** Stores (or, with `undefined`, forgets) the decision for `root`; other folders' entries are kept. */
export async function storeTrust(root: string, level: TrustLevel | undefined): Promise<void> {
  const shown = trustFilePath();
  mkdirSync(dirname(shown), { recursive: true, mode: 0o700 });
  const file = linkTarget(shown);
  const lock = await acquireLock(file);
  try {
    const current = readTrustFile(file);
    const folders = { ...current.folders };
    if (level === undefined) delete folders[root];
    else folders[root] = { trust: level, decided_at: new Date().toISOString() };
    if (lock.compromised()) throw new UsageError(`${shown}: another valarmind process took the lock; nothing was written`, { hint: "Run the command again." });
    await writeFileAtomic(file, `${JSON.stringify({ version: 1, folders }, null, 2)}\n`);
  } finally {
    await lock.release();
  }
}
