/**
 * Line endings for the file tools. read_file shows a file with `\r\n` as `\n`, so the model writes
 * `\n`: edit_file matches in an LF view of the file and gives the text it puts in the endings the
 * replaced lines had (or the file's own, for lines it adds); write_file over a CRLF file writes
 * CRLF. A file's endings never change unless the model wrote them on purpose.
 *
 *   const view = lfView("a\r\nb\nc\r\n");       // view.text === "a\nb\nc\n"
 *   view.original(2)                           // 3: where the view's offset 2 is in the file
 *   withEndings("a\nB\nc", endingsOf("a\r\nb\nc"), "\r\n")   // "a\r\nB\nc"
 */
export interface LfView {
  /** The text with every "\r\n" as "\n". */
  text: string;
  /** The file offset of a view offset (a match's start or end). */
  original(offset: number): number;
}

export function lfView(text: string): LfView {
  // View offsets of the "\n"s that were "\r\n", ascending.
  const crlf: number[] = [];
  let removed = 0;
  for (let at = text.indexOf("\r\n"); at >= 0; at = text.indexOf("\r\n", at + 2)) {
    crlf.push(at - removed);
    removed += 1;
  }
  if (crlf.length === 0) return { text, original: (offset) => offset };
  const before = (offset: number): number => {
    let lo = 0;
    let hi = crlf.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((crlf[mid] ?? 0) < offset) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  return { text: text.replaceAll("\r\n", "\n"), original: (offset) => offset + before(offset) };
}

/** The ending of each line break in `text`, in order. */
export function endingsOf(text: string): Array<"\r\n" | "\n"> {
  const out: Array<"\r\n" | "\n"> = [];
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) out.push(i > 0 && text[i - 1] === "\r" ? "\r\n" : "\n");
  return out;
}

/** The file's usual ending: CRLF when most of its line breaks are, else LF. */
export function usualEnding(text: string): "\r\n" | "\n" {
  const endings = endingsOf(text);
  const crlf = endings.filter((e) => e === "\r\n").length;
  return crlf > endings.length - crlf ? "\r\n" : "\n";
}

/** `lfText` (line breaks as "\n") with the k-th break written as `endings[k]`, the rest as `fallback`. */
export function withEndings(lfText: string, endings: ReadonlyArray<"\r\n" | "\n">, fallback: "\r\n" | "\n"): string {
  let k = 0;
  return lfText.replace(/\n/g, () => endings[k++] ?? endings.at(-1) ?? fallback);
}
