/** How tool facts name a workspace path, so a read and a later edit of one file match. */
import { posix } from "node:path";

/** "./src/a.ts" and "src//a.ts" name the same file as "src/a.ts". */
export function normalizeWorkspacePath(path: string): string {
  const normal = posix.normalize(path.replaceAll("\\", "/"));
  return normal.startsWith("./") ? normal.slice(2) : normal;
}
