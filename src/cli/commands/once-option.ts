/**
 * A value option given twice is a usage error, not "the last one wins": `chat -p A -p B` silently
 * sent only B, and `--why A --why B` recorded only B.
 *
 *   .option("-p, --print <message>", "…", once)
 */
import { InvalidArgumentError } from "commander";
import { oneLine } from "../../one-line.ts";

export function once(value: string, previous: string | undefined): string {
  if (previous !== undefined) throw new InvalidArgumentError(`it was given twice (first: "${oneLine(previous, 40)}"); give it once, with all the text in one value`);
  return value;
}
