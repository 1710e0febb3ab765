/**
 * The first `max` UTF-16 units of `text`, one fewer when the cut would split a surrogate pair:
 * half an emoji is no character, and a request holding one is JSON that servers refuse.
 *
 *   sliceWhole("ab😀", 3)  // "ab"
 */
export function sliceWhole(text: string, max: number): string {
  if (text.length <= max) return text;
  const code = text.charCodeAt(max - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? max - 1 : max);
}
