/**
 * The file one of the user's own settings files names: itself, or where its symbolic link points
 * (a dotfiles folder linked into ~/.config/valarmind). Written there, not over the link, which
 * would leave the dotfiles copy stale and unlinked. A link that leads nowhere is an error.
 */
import { lstatSync, readlinkSync, realpathSync } from "node:fs";
import { describeError, UsageError } from "../errors.ts";

export function linkTarget(file: string): string {
  let isLink = false;
  try {
    isLink = lstatSync(file).isSymbolicLink();
  } catch {
    return file;
  }
  if (!isLink) return file;
  try {
    return realpathSync(file);
  } catch (error) {
    throw new UsageError(`${file} is a symbolic link to ${readlinkSync(file)}, which cannot be opened (${describeError(error)}); nothing was written`, {
      hint: "Restore the file it points to, or replace the link with a regular file.",
    });
  }
}
