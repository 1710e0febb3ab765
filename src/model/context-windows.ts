/**
 * The context window of the models valarmind is most often pointed at, for the status line's
 * share of the model's real window beside the share of valarmind's own budget. Pure data and one
 * lookup; the `contextWindow` setting wins over it, and a name it does not know has no window.
 *
 * Values are the models' published context windows (input + output tokens): OpenAI's model pages
 * (https://platform.openai.com/docs/models/<name>), as also listed by the Vercel AI Gateway and
 * OpenRouter model pages and by gpt-tokenizer's model specs (test/model/context-windows.test.ts
 * checks the table against those specs, so a change upstream is noticed).
 */

interface WindowRule {
  /** Matched against the lower-cased name without a provider prefix (`openai/gpt-5` → `gpt-5`). */
  pattern: RegExp;
  tokens: number;
}

/** First match wins: the narrower names (chat variants, minis) come before their family. */
const WINDOW_RULES: readonly WindowRule[] = [
  // gpt-5-chat-latest, gpt-5.1-chat-latest, …: the ChatGPT models have a smaller window.
  { pattern: /^gpt-5(\.\d+)?-chat(-|$)/, tokens: 128_000 },
  { pattern: /^gpt-5\.[45]-(mini|nano)(-|$)/, tokens: 400_000 },
  { pattern: /^gpt-5\.[45](-pro)?(-\d{4}-\d{2}-\d{2})?$/, tokens: 1_050_000 },
  // gpt-5, gpt-5-mini, gpt-5-nano, gpt-5-pro, gpt-5-codex, gpt-5.1, gpt-5.1-codex(-max|-mini), gpt-5.2, gpt-5.2-codex, gpt-5.3-codex
  { pattern: /^gpt-5(\.[0-3])?(-|$)/, tokens: 400_000 },
  { pattern: /^gpt-4\.1(-mini|-nano)?(-\d{4}-\d{2}-\d{2})?$/, tokens: 1_047_576 },
  { pattern: /^gpt-4o(-mini)?(-\d{4}-\d{2}-\d{2})?$/, tokens: 128_000 },
  { pattern: /^(o1|o1-pro|o3|o3-mini|o3-pro|o4-mini)(-\d{4}-\d{2}-\d{2})?$/, tokens: 200_000 },
  { pattern: /^codex-mini-latest$/, tokens: 200_000 },
];

/** The published context window of `model`, in tokens, or undefined for a name the table does not know. */
export function knownContextWindow(model: string): number | undefined {
  const name = model.trim().toLowerCase().replace(/^.*\//, "");
  return WINDOW_RULES.find((rule) => rule.pattern.test(name))?.tokens;
}

/** The window the status line measures against: the `contextWindow` setting, else the table's. */
export function contextWindowFor(model: string, setting: number | undefined): number | undefined {
  return setting ?? knownContextWindow(model);
}
