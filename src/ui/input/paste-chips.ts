/**
 * Large pastes stay out of the editor: the buffer holds a short chip ("[pasted 120 lines]") and the
 * full text is kept aside until the prompt is sent, when every chip is expanded back.
 */
export type PasteStore = ReadonlyMap<string, string>;

/** Pastes at or above either threshold become a chip. */
export const CHIP_MIN_LINES = 6;
export const CHIP_MIN_CHARS = 800;

export function shouldChip(text: string): boolean {
  return text.length >= CHIP_MIN_CHARS || text.split("\n").length >= CHIP_MIN_LINES;
}

export function chipLabel(text: string, store: PasteStore): string {
  const lines = text.split("\n").length;
  const base = lines > 1 ? `[pasted ${lines} lines` : `[pasted ${text.length} chars`;
  let label = `${base}]`;
  for (let n = 2; store.has(label); n++) label = `${base} #${n}]`;
  return label;
}

export function addChip(text: string, store: PasteStore): { label: string; store: PasteStore } {
  const label = chipLabel(text, store);
  return { label, store: new Map([...store, [label, text]]) };
}

/**
 * `text` and its chips moved into `store`: a label already there (two messages each with a
 * "[pasted 40 lines]") gets the next free one, in the text too.
 */
export function mergeChips(text: string, chips: PasteStore, store: PasteStore): { text: string; store: PasteStore } {
  let out = text;
  let merged = store;
  for (const [label, pasted] of chips) {
    if (!out.includes(label)) continue;
    if (!merged.has(label)) {
      merged = new Map([...merged, [label, pasted]]);
      continue;
    }
    const added = addChip(pasted, merged);
    out = out.split(label).join(added.label);
    merged = added.store;
  }
  return { text: out, store: merged };
}

/** Replaces each chip still present in `text` by the text it stands for. */
export function expandChips(text: string, store: PasteStore): string {
  let out = text;
  for (const [label, pasted] of store) out = out.split(label).join(pasted);
  return out;
}

/** The chip that ends exactly at `cursor`, if any: backspace removes it whole. */
export function chipEndingAt(text: string, cursor: number, store: PasteStore): string | undefined {
  const before = text.slice(0, cursor);
  for (const label of store.keys()) if (before.endsWith(label)) return label;
  return undefined;
}
