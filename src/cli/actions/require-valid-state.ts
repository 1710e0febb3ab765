/**
 * Read-only commands (`state show`, `compact`, `prompt --dry-run`) never move or rewrite a bad
 * state.json: they stop with a usage error (exit 2) that says what is wrong and leave the file.
 */
import { UsageError } from "../../errors.ts";
import type { ReadResult } from "../../state/store.ts";

export function requireValidState(read: ReadResult): void {
  if (read.source !== "invalid") return;
  throw new UsageError(`${read.problem ?? "the working state is invalid"}\n  Nothing was changed.`, {
    hint: "Fix the file by hand, or run any change (e.g. 'valarmind state now …') to keep it aside as state.json.corrupt-<time> and start a fresh state.",
  });
}
