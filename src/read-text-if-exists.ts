import { readFile } from "node:fs/promises";
import { errnoCode } from "./errors.ts";

/** A file's text, or undefined when it does not exist; any other failure (permissions, a directory) is thrown. */
export async function readTextIfExists(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    if (errnoCode(error) === "ENOENT") return undefined;
    throw error;
  }
}
