/**
 * The redactor used for every file valarmind writes (src/secrets/redact-secrets.ts): what it
 * removes, what it must leave alone (the user's words), and that it stays linear on hostile input.
 * The environment is passed explicitly, so the developer's own variables never change a result.
 */
import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { forgetLearnedSecrets, redactSecrets, redactSecretsInJson } from "../../src/secrets/redact-secrets.ts";
import { isSecretName } from "../../src/secrets/secret-assignments.ts";

const GITHUB_TOKEN = "ghp_9fK2LmQx7RtY3vBn8WcZp1HsJd4Ge6Ua0Oi5";
const OPENAI_KEY = "sk-proj-Zq81mXv3TtLw9PbY2cRkD4nH7sJfUa6E";

// Learned values live for the process: start each case clean and leave none to other test files.
beforeEach(forgetLearnedSecrets);
afterAll(forgetLearnedSecrets);

describe("secrets from the environment", () => {
  test("the value of every secret-named variable is replaced by a marker naming the variable", () => {
    const env = { GITHUB_TOKEN: "not-a-known-format-1234", MY_SECRET: "hush-hush-value", DB_PASSWORD: "Tr0ub4dor&3", AWS_CREDENTIALS: "creds-abcdefgh", api_key: "lowercase-name-99" };
    const text = "a not-a-known-format-1234 b hush-hush-value c Tr0ub4dor&3 d creds-abcdefgh e lowercase-name-99";
    expect(redactSecrets(text, env)).toBe(
      "a [redacted:GITHUB_TOKEN] b [redacted:MY_SECRET] c [redacted:DB_PASSWORD] d [redacted:AWS_CREDENTIALS] e [redacted:api_key]",
    );
  });

  test("short values, plain numbers and variables with other names are left alone", () => {
    const env = { OPENAI_API_KEY: "e", MAX_CONTEXT_TOKENS: "12000000", HOME_DIR: "/home/someone", EDITOR_NAME: "vim-editor-9" };
    const text = "every message mentions e, 12000000 tokens, /home/someone and vim-editor-9";
    expect(redactSecrets(text, env)).toBe(text);
  });

  test("a value is redacted only as a whole token, never inside a longer word", () => {
    const env = { SIGNING_KEY: "assessment" };
    expect(redactSecrets("rename risk-assessment-module-refactor", env)).toBe("rename risk-assessment-module-refactor");
    expect(redactSecrets("the key is assessment.", env)).toBe("the key is [redacted:SIGNING_KEY].");
    expect(redactSecrets("url?k=assessment&x=1", env)).toBe("url?k=[redacted:SIGNING_KEY]&x=1");
  });

  test("a change of the environment takes effect at once (the cached matcher is keyed by the values)", () => {
    expect(redactSecrets("value-one-111 value-two-222", { A_TOKEN: "value-one-111" })).toBe("[redacted:A_TOKEN] value-two-222");
    expect(redactSecrets("value-one-111 value-two-222", { A_TOKEN: "value-two-222" })).toBe("value-one-111 [redacted:A_TOKEN]");
  });

  test("a secret that contains another is replaced whole", () => {
    const env = { SHORT_KEY: "abcdefgh12", LONG_KEY: "abcdefgh12-and-more" };
    expect(redactSecrets("x abcdefgh12-and-more y abcdefgh12", env)).toBe("x [redacted:LONG_KEY] y [redacted:SHORT_KEY]");
  });
});

describe("well-known key formats", () => {
  test.each([
    [OPENAI_KEY, "openai-key"],
    ["sk-Zq81mXv3TtLw9PbY2cRkD4nH7sJfUa6EZq81mXv3TtLw9PbY", "openai-key"],
    [GITHUB_TOKEN, "github-token"],
    ["gho_9fK2LmQx7RtY3vBn8WcZp1HsJd4Ge6Ua0Oi5", "github-token"],
    ["github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUV", "github-token"],
    ["AKIAIOSFODNN7EXAMPLE", "aws-access-key-id"],
    ["xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "slack-token"],
    ["glpat-Zq81mXv3TtLw9PbY2cRk", "gitlab-token"],
  ])("%s is redacted as %s wherever it stands alone", (key, what) => {
    expect(redactSecrets(`use ${key} now`, {})).toBe(`use [redacted:${what}] now`);
    expect(redactSecrets(`"${key}"`, {})).toBe(`"[redacted:${what}]"`);
    expect(redactSecrets(`x=${key};`, {})).toBe(`x=[redacted:${what}];`);
  });

  test("words that merely contain a key prefix stay intact", () => {
    const text = "rename risk-assessment-module-refactor; task-sk-abcdefghijklmnopqrstuvwxyz; use sk-learn-compatibility-layer-v2; ghp_short";
    expect(redactSecrets(text, {})).toBe(text);
  });

  test("a key glued inside a longer word is not a key", () => {
    expect(redactSecrets(`prefix${GITHUB_TOKEN}`, {})).toBe(`prefix${GITHUB_TOKEN}`);
  });

  test("bearer tokens and PEM private key blocks", () => {
    expect(redactSecrets("curl -H 'Authorization: Bearer abcdef0123456789abcdef'", {})).toBe("curl -H 'Authorization: Bearer [redacted:bearer-token]'");
    const pem = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----";
    expect(redactSecrets(`before\n${pem}\nafter`, {})).toBe("before\n[redacted:private-key]\nafter");
    // Output cut in the middle of a key: the rest of the text goes.
    expect(redactSecrets("x -----BEGIN RSA PRIVATE KEY-----\nMIIEow", {})).toBe("x [redacted:private-key]");
    expect(redactSecrets("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----", {})).toContain("MIIB");
  });
});

describe("secret-named assignments in text", () => {
  test(".env, JSON, YAML and flag forms", () => {
    const text = [
      "1\tGITHUB_TOKEN=some-custom-token-9",
      "2\texport DB_PASSWORD=hunter2hunter2",
      '3\t{"api_key": "letters-only-but-quoted", "client_secret":"x9x9x9x9x9"}',
      "4\tpassword: correcthorse1",
      "5\trun --auth-token=abcd1234efgh",
      "6\taws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    ].join("\n");
    expect(redactSecrets(text, {})).toBe(
      [
        "1\tGITHUB_TOKEN=[redacted:GITHUB_TOKEN]",
        "2\texport DB_PASSWORD=[redacted:DB_PASSWORD]",
        '3\t{"api_key": "[redacted:api_key]", "client_secret":"[redacted:client_secret]"}',
        "4\tpassword: [redacted:password]",
        "5\trun --auth-token=[redacted:auth-token]",
        "6\taws_secret_access_key = [redacted:aws_secret_access_key]",
      ].join("\n"),
    );
  });

  test("code, counts, references and prose under secret-looking names stay readable", () => {
    const text = [
      "const apiKey = options.apiKey;",
      "token: string",
      "max_tokens: 12000000",
      '"maxTokens": 128000',
      "GITHUB_TOKEN=$GITHUB_TOKEN",
      'token: "${{ secrets.GITHUB_TOKEN }}"',
      '"password": "see the team vault"',
      "api_key=short",
      "keyboard: layout-de-1234",
      "prompt_cache_key: vm-1234",
    ].join("\n");
    expect(redactSecrets(text, {})).toBe(text);
  });

  test("a value found by its name is recognised bare afterwards, and earlier in the same text", () => {
    expect(redactSecrets("the model says Pg-s3cret-Passw0rd-2024", {})).toBe("the model says Pg-s3cret-Passw0rd-2024");
    expect(redactSecrets('bare Pg-s3cret-Passw0rd-2024 first, then {"database_password": "Pg-s3cret-Passw0rd-2024"}', {})).toBe(
      'bare [redacted:database_password] first, then {"database_password": "[redacted:database_password]"}',
    );
    expect(redactSecrets("the model says Pg-s3cret-Passw0rd-2024", {})).toBe("the model says [redacted:database_password]");
  });

  test("names: key and token as a word part, the strong words anywhere", () => {
    for (const name of ["GITHUB_TOKEN", "api_key", "apiKey", "accessToken", "db-password", "PGPASSWORD", "client_secret", "AWS_CREDENTIALS"]) {
      expect(isSecretName(name)).toBe(true);
    }
    for (const name of ["tokens", "max_tokens", "keyboard", "keys", "tokenizer", "goal"]) expect(isSecretName(name)).toBe(false);
  });
});

describe("JSON values", () => {
  test("every string is redacted, keys and non-strings are kept, and the result is valid JSON", () => {
    const value = { kind: "tool_call", tokens: 12000000, output: `GITHUB_TOKEN=${GITHUB_TOKEN}\n"quoted"`, nested: [{ text: `key ${OPENAI_KEY}` }], ok: true };
    const redacted = redactSecretsInJson(value, {});
    expect(redacted).toEqual({ kind: "tool_call", tokens: 12000000, output: 'GITHUB_TOKEN=[redacted:GITHUB_TOKEN]\n"quoted"', nested: [{ text: "key [redacted:openai-key]" }], ok: true });
    expect(value.output).toContain(GITHUB_TOKEN); // the input is not changed
  });

  test("a secret JSON would escape is still found (values are redacted before serializing)", () => {
    const env = { WEIRD_SECRET: 'quote"and\\backslash' };
    const line = JSON.stringify(redactSecretsInJson({ text: 'x quote"and\\backslash y' }, env));
    expect(line).toBe('{"text":"x [redacted:WEIRD_SECRET] y"}');
  });
});

describe("linear time on pathological input", () => {
  const MB = 1 << 20;
  const env = { SOME_TOKEN: "aaaaaaab", OTHER_KEY: "aaaaaaaa" };
  test.each(["a", "-", '"', "=", ":", "k", "key=", 'key="', "password='", "a.", "sk-", "ghp_", "-----BEGIN ", "Bearer ", 'k:"x\n', "a=b:", '"k":"'])(
    "1 MB of %p redacts in well under a second",
    (unit) => {
      const text = unit.repeat(Math.ceil(MB / unit.length));
      const started = performance.now();
      redactSecrets(text, env);
      expect(performance.now() - started).toBeLessThan(500);
    },
  );
});
