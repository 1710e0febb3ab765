/**
 * The git configuration valarmind forces on its own git calls, so that nothing a repository's
 * `.git/config` (or a file it includes) names as a program ever runs. Each value was checked
 * against git 2.39 (test/security/git-calls.test.ts runs every case: plain git runs the
 * repository's program, git with these overrides does not).
 *
 * Overrides travel as GIT_CONFIG_COUNT/KEY/VALUE, which git reads after every config file, and
 * which, unlike `-c name=value`, take subsection names holding `=` or spaces as they are.
 */

export interface ConfigOverride {
  key: string;
  value: string;
}

/** Settings with one fixed name. Empty values were chosen only where git then runs nothing. */
export const FIXED_OVERRIDES: readonly ConfigOverride[] = [
  // `git status` runs the fsmonitor hook through the shell on every call.
  { key: "core.fsmonitor", value: "false" },
  { key: "core.hooksPath", value: "/dev/null" },
  // `pager.<cmd>` beats core.pager; the `--no-pager` option safeGitArgs adds beats both.
  { key: "core.pager", value: "cat" },
  { key: "core.editor", value: "false" },
  { key: "sequence.editor", value: "false" },
  // An empty askPass or credential.helper disables it; the empty helper also clears URL-specific ones.
  { key: "core.askPass", value: "" },
  { key: "credential.helper", value: "" },
  { key: "core.sshCommand", value: "false" },
  // git takes the first gpg program it finds per format; gpg.program is the openpgp one.
  { key: "gpg.program", value: "false" },
  { key: "gpg.openpgp.program", value: "false" },
  { key: "gpg.x509.program", value: "false" },
  { key: "gpg.ssh.program", value: "false" },
  { key: "log.showSignature", value: "false" },
  // Empty makes an external diff fail rather than run; diff-family calls also get --no-ext-diff.
  { key: "diff.external", value: "" },
  // No transport at all: remote helpers, `ext::`, uploadpack over file:// all need one.
  { key: "protocol.allow", value: "never" },
  // A repository's `protocol.<name>.allow` beats `protocol.allow`, so the known names are closed
  // by name too (and any other the config mentions, in driverOverrides).
  ...["file", "git", "ssh", "http", "https", "ext", "fd"].map((name) => ({ key: `protocol.${name}.allow`, value: "never" })),
];

/**
 * Environment values git reads before its config. `core.gitProxy` cannot be overridden by config
 * (git keeps the first value it reads, and the repository's comes before ours); an empty
 * GIT_PROXY_COMMAND is read first and means "no proxy".
 */
export const FIXED_ENVIRONMENT: Readonly<Record<string, string>> = {
  GIT_TERMINAL_PROMPT: "0",
  GIT_ASKPASS: "",
  GIT_PROXY_COMMAND: "",
};

/** The config keys whose names a repository chooses, as `git config -z --get-regexp` selects them. */
export const DRIVER_KEYS_PATTERN = "^(filter|diff|merge|protocol)\\.";

/** `git config -z --get-regexp` output (`key\nvalue\0` or `key\0`) as the list of keys. */
export function parseConfigKeys(output: string): string[] {
  return output
    .split("\0")
    .filter((entry) => entry !== "")
    .map((entry) => {
      const newline = entry.indexOf("\n");
      return newline === -1 ? entry : entry.slice(0, newline);
    });
}

/**
 * Overrides for the drivers a config names: every filter (clean/smudge/process emptied — git then
 * passes content through — and required=false, or git status dies on a required filter), every
 * diff driver's textconv and command (emptied: git fails instead of running it), every merge
 * driver (`false`: a conflict) and every `protocol.<name>.allow`.
 */
export function driverOverrides(keys: readonly string[]): ConfigOverride[] {
  const out = new Map<string, string>();
  for (const key of keys) {
    const filter = /^filter\.(.+)\.[^.]+$/.exec(key);
    if (filter) {
      const name = filter[1];
      for (const field of ["clean", "smudge", "process"]) out.set(`filter.${name}.${field}`, "");
      out.set(`filter.${name}.required`, "false");
      continue;
    }
    const diff = /^diff\.(.+)\.(textconv|command)$/.exec(key);
    if (diff) {
      out.set(`diff.${diff[1]}.textconv`, "");
      out.set(`diff.${diff[1]}.command`, "");
      continue;
    }
    const merge = /^merge\.(.+)\.driver$/.exec(key);
    if (merge) {
      out.set(key, "false");
      continue;
    }
    if (/^protocol\.(.+)\.allow$/.test(key)) out.set(key, "never");
  }
  return [...out].map(([key, value]) => ({ key, value }));
}

/** The overrides as the GIT_CONFIG_COUNT/KEY_n/VALUE_n environment git reads last. */
export function configEnvironment(overrides: readonly ConfigOverride[]): Record<string, string> {
  const env: Record<string, string> = { GIT_CONFIG_COUNT: String(overrides.length) };
  overrides.forEach(({ key, value }, i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key;
    env[`GIT_CONFIG_VALUE_${i}`] = value;
  });
  return env;
}

/** Subcommands that can show diffs: the repository's external diff and textconv are switched off by option too. */
const DIFF_FAMILY = new Set(["diff", "log", "show", "whatchanged", "format-patch"]);

/**
 * The full argument list: global options first (`--no-pager`: pager.<cmd> is otherwise honoured
 * on a terminal; `--no-optional-locks`: reading never rewrites the index), then the subcommand,
 * with `--no-ext-diff --no-textconv` for the diff family.
 */
export function safeGitArgs(args: readonly string[]): string[] {
  const [subcommand, ...rest] = args;
  // Global options (`-c`, `-C`, `--exec-path`) could re-arm what the overrides disarm: `-c` wins over them.
  if (subcommand === undefined || subcommand.startsWith("-")) throw new Error(`runGit needs a git subcommand first, got ${JSON.stringify(subcommand ?? "")}`);
  const diffOptions = DIFF_FAMILY.has(subcommand) ? ["--no-ext-diff", "--no-textconv"] : [];
  return ["--no-pager", "--no-optional-locks", subcommand, ...diffOptions, ...rest];
}
