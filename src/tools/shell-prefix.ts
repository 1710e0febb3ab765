/**
 * Which run_shell commands "allow for this session" may remember by prefix, and what a remembered
 * prefix matches later (docs/tools.md, "Session approvals"). A prefix is the command and at most its
 * first subcommand word ("git diff", "cargo test", "ls"). Commands that take code, commands or
 * output paths as arguments are never offered a prefix: for them only the exact command line can be
 * remembered. A remembered prefix matches a later command only if the words bash will run are the
 * words seen here (no shell syntax), none is an option that runs a command or writes a file, and no
 * path argument reaches outside the workspace.
 */

// Syntax that chains, substitutes, redirects, groups, quotes, escapes, globs or expands: with any
// of it the words bash runs are not the words split here, so the command can only be exact.
const SHELL_SYNTAX = /[;&|`$<>()'"\\*?[\]{}\n\r]/;
// Whitespace other than space and tab (and control characters): bash keeps them inside a word.
const ODD_WHITESPACE = /[\u0000-\u0008\u000b-\u001f\u007f\u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]/;

/** Interpreters and commands whose arguments are code, commands or output paths: exact only (lower case). */
const EXACT_ONLY_COMMANDS = new Set([
  // interpreters and runners
  "node", "nodejs", "bun", "bunx", "deno", "npx", "pnpx", "uvx", "pipx", "pip", "pip3", "py", "ipython",
  "tsx", "ts-node", "nodemon",
  "bash", "sh", "zsh", "dash", "fish", "ksh", "mksh", "csh", "tcsh", "ash", "busybox",
  "perl", "ruby", "irb", "php", "lua", "luajit", "rscript", "r", "osascript", "pwsh", "powershell",
  "java", "jshell", "groovy", "scala", "kotlin", "julia", "tclsh", "wish", "expect", "swift",
  "awk", "gawk", "mawk", "nawk", "sed",
  // commands that run other commands
  "env", "xargs", "parallel", "find", "fd", "fdfind", "exec", "eval", "source", ".", "command", "builtin",
  "sudo", "doas", "su", "pkexec", "runuser", "nohup", "nice", "ionice", "timeout", "time", "watch",
  "strace", "ltrace", "gdb", "lldb", "valgrind", "stdbuf", "setsid", "chroot", "unshare", "nsenter",
  "flock", "script", "trap", "make", "gmake", "cmake",
  // editors and pagers (they can run shell commands)
  "vim", "vi", "nvim", "view", "ex", "ed", "emacs", "nano", "less", "more", "most", "man",
  // network, archives and file changes whose arguments are destinations
  "ssh", "scp", "sftp", "rsync", "tar", "zip", "unzip", "7z", "curl", "wget", "dd", "tee",
  "cp", "mv", "rm", "ln", "chmod", "chown", "chgrp", "install", "truncate", "shred",
  "kill", "pkill", "killall", "crontab", "open", "xdg-open",
  // containers and clusters
  "docker", "podman", "kubectl", "helm", "nerdctl",
]);
const EXACT_ONLY_PATTERN = /^(python|pypy|ruby|perl|php|lua|node|pwsh)[\d.]*$/;

/**
 * Tools whose first word alone would cover every subcommand: a prefix needs their subcommand, and
 * these subcommands run code from arguments or the registry, or configure the tool: exact only.
 */
const EXACT_ONLY_SUBCOMMANDS: ReadonlyMap<string, readonly string[]> = new Map(Object.entries({
  git: ["config", "bisect", "submodule", "filter-branch", "difftool", "mergetool", "rebase", "daemon", "instaweb", "send-email", "credential", "hook", "clone", "archive"],
  npm: ["exec", "x", "create", "init", "explore", "run", "run-script", "rebuild", "install", "i", "add", "ci", "install-test", "it", "link"],
  pnpm: ["dlx", "exec", "create", "init", "run", "add", "install", "i"],
  yarn: ["dlx", "exec", "create", "init", "run", "add", "install", "node"],
  cargo: ["run", "install"],
  go: ["run", "install", "generate", "get", "tool", "env"],
  uv: ["run", "tool", "pip", "add"],
  poetry: ["run"],
  pipenv: ["run"],
  bundle: ["exec"],
  dotnet: ["run"],
  composer: ["exec", "run", "run-script"],
}));

/** Options that run a command, write a file or change where a tool reads its config, for any command. */
const DANGEROUS_OPTIONS: readonly RegExp[] = [
  /^--out/, // --output, --outfile, --out-dir
  /^-o$/,
  /^--exec/, // --exec, --exec-path
  /^-(exec|execdir|ok|okdir|delete|fls)$/,
  /^-fprint/,
  /^--(upload-pack|receive-pack|config|git-dir|work-tree|ext-diff|textconv|template|open-files-in-pager|extcmd|eval|init-file|rcfile)/,
  /^--pre(-glob)?(=|$)/, // ripgrep runs --pre COMMAND on each file
];
/** git's own: -c/-C (config, directory) and -O (git grep opens files in a command). */
const GIT_DANGEROUS_OPTIONS = /^-[cCO]/;

const SUBCOMMAND_WORD = /^[A-Za-z][\w:.-]*$/;

/** The words of a command line, or undefined when bash would not run exactly these words. */
function plainWords(command: string): string[] | undefined {
  const trimmed = command.trim();
  if (trimmed === "" || SHELL_SYNTAX.test(trimmed) || ODD_WHITESPACE.test(trimmed)) return undefined;
  return trimmed.split(/[ \t]+/);
}

/** The command's name, lower-cased: on a case-insensitive file system `Python` runs python. */
function baseName(word: string): string {
  return word.slice(word.lastIndexOf("/") + 1).toLowerCase();
}

function isExactOnlyCommand(first: string): boolean {
  const name = baseName(first);
  return EXACT_ONLY_COMMANDS.has(name) || EXACT_ONLY_PATTERN.test(name);
}

/** A piece of an argument that names a place outside the workspace (or the repository's .git). */
function reachesOutside(piece: string): boolean {
  return piece.startsWith("/") || piece.startsWith("~") || /(^|\/)\.\.(\/|$)/.test(piece) || /(^|\/)\.git(\/|$)/.test(piece);
}

/** The argument and the values inside it (`--opt=VALUE`, `-oVALUE`, `a:b,c`), each checked as a path. */
function pathPieces(arg: string): string[] {
  const pieces = arg.split(/[=:,]/);
  if (/^-[A-Za-z]./.test(arg)) pieces.push(arg.slice(2));
  return [arg, ...pieces];
}

function isDangerousArgument(first: string, arg: string): boolean {
  if (DANGEROUS_OPTIONS.some((pattern) => pattern.test(arg))) return true;
  if (baseName(first) === "git" && GIT_DANGEROUS_OPTIONS.test(arg)) return true;
  return pathPieces(arg).some(reachesOutside);
}

/** False when no prefix may ever cover this command (an assignment, an exact-only command, a risky argument). */
function commandIsPlain(words: readonly string[]): boolean {
  const [first, ...args] = words;
  if (first === undefined || first.includes("=")) return false; // VAR=value changes what runs
  if (/(^|\/)\.\.(\/|$)/.test(first) || first.startsWith("~")) return false;
  if (isExactOnlyCommand(first)) return false;
  return !args.some((arg) => isDangerousArgument(first, arg));
}

/**
 * The prefix "allow for this session" may offer for a command, or undefined when only the exact
 * command can be remembered: "cargo test --lib" → "cargo test"; "ls -la" → "ls";
 * "python -m pytest", "git -C x status", "npm run build", "make test" → undefined.
 */
export function sessionPrefix(command: string): string | undefined {
  const words = plainWords(command);
  if (!words || !commandIsPlain(words)) return undefined;
  const [first, second] = words;
  if (first === undefined) return undefined;
  const subcommand = second !== undefined && SUBCOMMAND_WORD.test(second) ? second : undefined;
  const exactSubcommands = EXACT_ONLY_SUBCOMMANDS.get(baseName(first));
  if (exactSubcommands) {
    // A bare "git" or "npm" prefix would cover every subcommand, including the ones listed.
    if (subcommand === undefined || exactSubcommands.includes(subcommand.toLowerCase())) return undefined;
  }
  return subcommand === undefined ? first : `${first} ${subcommand}`;
}

/** Whether a remembered prefix covers this command now (checked at every call, not only when offered). */
export function prefixAllows(prefix: string, command: string): boolean {
  const words = plainWords(command);
  if (!words || !commandIsPlain(words)) return false;
  const prefixWords = prefix.split(" ");
  if (!prefixWords.every((word, i) => words[i] === word)) return false;
  const [first, second] = words;
  const exactSubcommands = first === undefined ? undefined : EXACT_ONLY_SUBCOMMANDS.get(baseName(first));
  return !(exactSubcommands && second !== undefined && exactSubcommands.includes(second.toLowerCase()));
}
