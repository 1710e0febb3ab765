/**
 * The message of a headless run (`chat -p MESSAGE`), and of the dry run that previews it
 * (`prompt MESSAGE`): `-` reads it from standard input; otherwise what a pipe or a redirected file
 * holds is appended (a terminal or /dev/null is not read; a silent pipe is waited on briefly).
 * A message that calls a custom command ("/review src/a.ts", typed or piped) becomes its text.
 */
import { UsageError } from "../../errors.ts";
import { withPipedInput } from "../../prompt/piped-input.ts";
import { readStdin, stdinKind } from "../piped-input.ts";
import { headlessCommandCall } from "./custom-commands-for-run.ts";

export interface HeadlessMessageText {
  text: string;
  /** Said once the session is open: a pipe that sent nothing was left unread, a command file's notes. */
  notices: string[];
  /** The custom command as typed (`/NAME ARGS`), when `text` is its expansion. */
  typed?: string;
}

export async function headlessMessage(root: string, trustFlag: boolean | undefined, raw: string, waitMs: number): Promise<HeadlessMessageText> {
  // `-p /NAME ARGS` and `-p -` reading "/NAME ARGS" both call a custom command.
  const call = raw === "-" ? undefined : await headlessCommandCall(root, trustFlag, raw);
  const read = await readMessage(call?.text ?? raw, waitMs);
  const piped = raw === "-" ? await headlessCommandCall(root, trustFlag, read.text) : undefined;
  const typed = call?.called ? raw : piped?.called ? read.text : undefined;
  return { text: piped?.text ?? read.text, notices: [...(call?.notices ?? []), ...(piped?.notices ?? []), ...read.notices], ...(typed !== undefined && { typed }) };
}

/**
 * The turn's message: `-p -` reads it from standard input; `-p MESSAGE` appends what a pipe or a
 * redirected file holds (a terminal or /dev/null is not read; a silent pipe is waited on briefly).
 */
async function readMessage(raw: string, waitMs: number): Promise<HeadlessMessageText> {
  if (raw === "-") {
    const read = await readStdin("-p -: standard input");
    const text = read.kind === "text" ? read.text : "";
    if (text.trim() === "") throw new UsageError("-p -: standard input was empty", { hint: "Pipe the message into valarmind (echo 'fix the test' | valarmind chat -p -)." });
    return { text, notices: [] };
  }
  if (raw.trim() === "") throw new UsageError("-p needs a non-empty MESSAGE", { hint: "Pass the message after -p, e.g. -p \"fix the failing test\"." });
  const kind = stdinKind();
  if (kind === "none") return { text: raw, notices: [] };
  const read = await readStdin("piped standard input", kind === "pipe" ? { firstByteWaitMs: waitMs } : {});
  if (read.kind === "silent") {
    return {
      text: raw,
      notices: [
        `standard input is a pipe that sent nothing in ${read.waitedMs} ms, so nothing was appended to the message. For a slow command in the pipe set VALARMIND_STDIN_WAIT_MS (e.g. 60000); when nothing is meant to be piped, start valarmind with </dev/null.`,
      ],
    };
  }
  return { text: read.text.trim() === "" ? raw : withPipedInput(raw, read.text), notices: [] };
}
