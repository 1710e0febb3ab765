import { join } from "node:path";
import { homeDir, xdgBaseDir } from "./home-dir.ts";

/** The user's own valarmind directory (XDG): settings and folder-trust decisions; never inside a repository. */
export function userConfigDir(): string {
  return join(xdgBaseDir("XDG_CONFIG_HOME", ".config"), "valarmind");
}

/** The user config file as a hint names it: this machine's path, with the home directory as `~`. */
export function userConfigFileShown(): string {
  const file = join(userConfigDir(), "config.json");
  const home = homeDir();
  return home !== undefined && file.startsWith(`${home}/`) ? `~${file.slice(home.length)}` : file;
}
