/** How tool facts name a workspace path, so a read and a later edit of one file match. */
import { posix } from "node:path";

/**
 * "./src/a.ts" and "src//a.ts" name the same file as "src/a.ts"; with the workspace `root`, so
 * does "/abs/workspace/src/a.ts" (the model may name files either way).
 */
export function normalizeWorkspacePath(path: string, root?: string): string {
  const normal = posix.normalize(path.replaceAll("\\", "/"));
  if (root !== undefined && posix.isAbsolute(normal)) {
    const rel = posix.relative(posix.normalize(root.replaceAll("\\", "/")), normal);
    if (rel !== "" && !rel.startsWith("..") && !posix.isAbsolute(rel)) return rel;
  }
  return normal.startsWith("./") ? normal.slice(2) : normal;
}
