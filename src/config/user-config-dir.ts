import { homedir } from "node:os";
import { join } from "node:path";

/** The user's own valarmind directory (XDG): settings and folder-trust decisions; never inside a repository. */
export function userConfigDir(): string {
  const base = process.env.XDG_CONFIG_HOME || join(homedir(), ".config");
  return join(base, "valarmind");
}

/** The user config file as a hint names it: this machine's path, with the home directory as `~`. */
export function userConfigFileShown(): string {
  const file = join(userConfigDir(), "config.json");
  const home = homedir();
  return home !== "" && file.startsWith(`${home}/`) ? `~${file.slice(home.length)}` : file;
}
