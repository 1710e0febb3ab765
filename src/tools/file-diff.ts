/**
 * Unified diffs of a file change (the `diff` package, imported on the first diff so that listing
 * the tools stays cheap), with +/- line counts for summaries.
 */

export interface FileDiff {
  text: string;
  added: number;
  removed: number;
}

/** `before` undefined means the file is new (diffed against /dev/null). */
export async function fileDiff(rel: string, before: string | undefined, after: string): Promise<FileDiff> {
  const { FILE_HEADERS_ONLY, createTwoFilesPatch, structuredPatch } = await import("diff");
  const oldName = before === undefined ? "/dev/null" : `a/${rel}`;
  const text = createTwoFilesPatch(oldName, `b/${rel}`, before ?? "", after, undefined, undefined, {
    context: 3,
    headerOptions: FILE_HEADERS_ONLY,
  });
  let added = 0;
  let removed = 0;
  for (const hunk of structuredPatch(oldName, rel, before ?? "", after).hunks) {
    for (const line of hunk.lines) {
      if (line.startsWith("+")) added++;
      else if (line.startsWith("-")) removed++;
    }
  }
  return { text, added, removed };
}
