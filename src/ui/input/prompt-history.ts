/**
 * Up/down history navigation as a value. `index === entries.length` means the draft being typed,
 * which is kept while browsing so down-arrow past the newest entry brings it back.
 */
export interface HistoryCursor {
  readonly entries: readonly string[];
  readonly index: number;
  readonly draft: string;
}

export function historyCursor(entries: readonly string[]): HistoryCursor {
  return { entries, index: entries.length, draft: "" };
}

export function historyPrevious(
  cursor: HistoryCursor,
  current: string,
): { cursor: HistoryCursor; text: string } | undefined {
  if (cursor.index === 0) return undefined;
  const draft = cursor.index === cursor.entries.length ? current : cursor.draft;
  const index = cursor.index - 1;
  return { cursor: { ...cursor, index, draft }, text: cursor.entries[index] ?? "" };
}

export function historyNext(cursor: HistoryCursor): { cursor: HistoryCursor; text: string } | undefined {
  if (cursor.index >= cursor.entries.length) return undefined;
  const index = cursor.index + 1;
  const text = index === cursor.entries.length ? cursor.draft : (cursor.entries[index] ?? "");
  return { cursor: { ...cursor, index }, text };
}

/** Records a sent entry (skipping an immediate repeat) and returns to a fresh draft. */
export function historyPush(cursor: HistoryCursor, entry: string): HistoryCursor {
  const entries = cursor.entries.at(-1) === entry ? cursor.entries : [...cursor.entries, entry];
  return { entries, index: entries.length, draft: "" };
}
