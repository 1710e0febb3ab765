/** `path` with its symbolic links resolved, or `path` itself when it cannot be (missing, no permission). */
import { realpathSync } from "node:fs";

export function realPathOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
