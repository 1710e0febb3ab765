/**
 * The user's home directory and the XDG base directories, for a process that may have neither:
 * a container started with `--user N` has no HOME and no passwd entry, where `os.homedir()`
 * throws (every command but --version printed a stack trace). Without a home, valarmind goes on
 * without the user's own files (settings, trusted folders, the tokenizer cache), as a user
 * whose passwd home is the conventional `/nonexistent`: reads find nothing, writes say where
 * they failed. Relative XDG variables are ignored, as the XDG spec says (a relative
 * XDG_CONFIG_HOME wrote the trust decision into the repository the command ran in).
 */
import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";

/** Where a user without a home directory keeps nothing (the passwd convention for such users). */
export const NO_HOME = "/nonexistent";

/** The home directory, or undefined when there is none (HOME unset or empty, and no passwd entry). */
export function homeDir(): string | undefined {
  try {
    const home = homedir();
    return home === "" ? undefined : home;
  } catch {
    return undefined;
  }
}

/** `$XDG_<NAME>_HOME` when it is an absolute path, else `~/<fallback>` (under NO_HOME without a home). */
export function xdgBaseDir(variable: "XDG_CONFIG_HOME" | "XDG_CACHE_HOME", fallback: string): string {
  const value = process.env[variable];
  if (value !== undefined && isAbsolute(value)) return value;
  return join(homeDir() ?? NO_HOME, fallback);
}
