/**
 * Well-known credential formats, recognised wherever they stand as a whole token (OpenAI, GitHub,
 * AWS access key ids, Slack, GitLab, Google, Stripe, npm), and PEM private key blocks.
 *
 * Linear time by construction: one pass finds maximal runs of token characters (the lookbehind
 * lets a run start only where the previous character is not a token character, and the greedy
 * class never backtracks), and each run is classified by anchored patterns on the run alone.
 */
import { redactionMarker } from "./token-boundary.ts";

const TOKEN_RUN = /(?<![A-Za-z0-9_-])[A-Za-z0-9_-]{16,}/g;

interface KeyFormat {
  what: string;
  pattern: RegExp;
  /** Extra shape test for prefixes that ordinary words can share (`sk-learn-…`). */
  shape?: (token: string) => boolean;
}

/** Some run of 12+ letters and digits that mixes both: random key material, not hyphenated words. */
export function hasKeyMaterial(token: string): boolean {
  for (const run of token.split(/[^A-Za-z0-9]+/)) {
    if (run.length >= 12 && /[A-Za-z]/.test(run) && /[0-9]/.test(run)) return true;
  }
  return false;
}

const FORMATS: readonly KeyFormat[] = [
  { what: "openai-key", pattern: /^sk-[A-Za-z0-9_-]{20,}$/, shape: hasKeyMaterial },
  { what: "github-token", pattern: /^(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})$/ },
  { what: "aws-access-key-id", pattern: /^(?:AKIA|ASIA)[0-9A-Z]{16}$/ },
  { what: "slack-token", pattern: /^xox[abposr]-[A-Za-z0-9-]{10,}$/ },
  { what: "gitlab-token", pattern: /^glpat-[A-Za-z0-9_-]{20,}$/ },
  { what: "google-api-key", pattern: /^AIza[A-Za-z0-9_-]{35}$/ },
  { what: "stripe-key", pattern: /^(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}$/ },
  { what: "npm-token", pattern: /^npm_[A-Za-z0-9]{36}$/ },
];

function classify(token: string): string | undefined {
  for (const format of FORMATS) {
    if (format.pattern.test(token) && (format.shape?.(token) ?? true)) return format.what;
  }
  return undefined;
}

export function redactKeyFormats(text: string): string {
  return text.replace(TOKEN_RUN, (token) => {
    const what = classify(token);
    return what === undefined ? token : redactionMarker(what);
  });
}

const BEARER = /(?<![A-Za-z0-9_-])Bearer[ \t]+([A-Za-z0-9._~+/-]{16,}=*)/g;

/** `Authorization: Bearer <token>` in a curl command or a log, when the token is key material. */
export function redactBearerTokens(text: string): string {
  return text.replace(BEARER, (all, token: string) => (hasKeyMaterial(token) ? all.replace(token, redactionMarker("bearer-token")) : all));
}

const PEM_BEGIN = "-----BEGIN ";
const PEM_END = "-----END ";
const PEM_DASHES = "-----";

/**
 * `-----BEGIN … PRIVATE KEY-----` through the matching END line (or the end of the text, when a
 * tool's output was cut in the middle of the key). Found with indexOf, so a text full of BEGIN
 * lines is still one pass.
 */
export function redactPrivateKeyBlocks(text: string): string {
  let at = text.indexOf(PEM_BEGIN);
  if (at === -1) return text;
  let out = "";
  let from = 0;
  while (at !== -1) {
    const labelEnd = text.indexOf(PEM_DASHES, at + PEM_BEGIN.length);
    const label = labelEnd === -1 ? "" : text.slice(at + PEM_BEGIN.length, labelEnd);
    if (labelEnd === -1 || label.length > 40 || !label.endsWith("PRIVATE KEY")) {
      at = text.indexOf(PEM_BEGIN, at + PEM_BEGIN.length);
      continue;
    }
    const endAt = text.indexOf(PEM_END, labelEnd + PEM_DASHES.length);
    const endDashes = endAt === -1 ? -1 : text.indexOf(PEM_DASHES, endAt + PEM_END.length);
    const blockEnd = endDashes === -1 ? text.length : endDashes + PEM_DASHES.length;
    out += `${text.slice(from, at)}${redactionMarker("private-key")}`;
    from = blockEnd;
    at = text.indexOf(PEM_BEGIN, blockEnd);
  }
  return out + text.slice(from);
}
