/**
 * Lone UTF-16 surrogates (`"\ud800"` in a hand-edited state.json) are valid JSON but not text: the
 * tokenizer and the model request cannot encode them. Each one is replaced by U+FFFD in memory and
 * reported by JSON pointer, so the rest of the state still reaches the prompt.
 */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

function pointerPart(key: string): string {
  return key.replace(/~/g, "~0").replace(/\//g, "~1");
}

/** `value` with every lone surrogate in its strings and keys replaced; `found` lists where. */
export function replaceLoneSurrogates(value: unknown, at = ""): { value: unknown; found: string[] } {
  if (typeof value === "string") {
    LONE_SURROGATE.lastIndex = 0;
    if (!LONE_SURROGATE.test(value)) return { value, found: [] };
    return { value: value.replace(LONE_SURROGATE, "\ufffd"), found: [at === "" ? "/" : at] };
  }
  if (Array.isArray(value)) {
    const found: string[] = [];
    const items = value.map((item, i) => {
      const r = replaceLoneSurrogates(item, `${at}/${i}`);
      found.push(...r.found);
      return r.value;
    });
    return found.length > 0 ? { value: items, found } : { value, found };
  }
  if (typeof value === "object" && value !== null) {
    const found: string[] = [];
    const entries = Object.entries(value).map(([key, item]) => {
      const name = String(replaceLoneSurrogates(key).value);
      const path = `${at}/${pointerPart(name)}`;
      if (name !== key) found.push(`${path} (the name)`);
      const r = replaceLoneSurrogates(item, path);
      found.push(...r.found);
      return [name, r.value] as const;
    });
    return found.length > 0 ? { value: Object.fromEntries(entries), found } : { value, found };
  }
  return { value, found: [] };
}
