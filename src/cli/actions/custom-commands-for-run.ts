/**
 * The custom commands of one `valarmind chat` run: the user's, and the project's when the folder
 * is trusted (a stored decision or --trust). The REPL offers them as slash commands; `chat -p
 * "/NAME ARGS"` sends the expanded text, so a script can use the same commands.
 */
import { loadCustomCommands } from "../../agent/custom-command-files.ts";
import { customCommandCall, type CustomCommandSet } from "../../agent/custom-commands.ts";
import { builtInCommandNames, parseSlash } from "../../agent/slash-catalog.ts";
import { UsageError } from "../../errors.ts";
import { decideTrust } from "./workspace-trust.ts";

/** Read after the trust question, so an answer given there already counts. */
export function customCommandsForRun(root: string, trustFlag: boolean | undefined): Promise<CustomCommandSet> {
  return loadCustomCommands({ root, trusted: decideTrust(root, trustFlag).trusted, reserved: builtInCommandNames() });
}

/**
 * `chat -p MESSAGE`: a MESSAGE that calls a custom command becomes its expanded text; other text,
 * built-in command names included, is sent as typed. The commands are read only for a MESSAGE
 * that starts like a slash command, and their notices are said then.
 */
export async function headlessCommandCall(root: string, trustFlag: boolean | undefined, message: string): Promise<{ text: string; notices: string[]; called?: true }> {
  const slash = parseSlash(message);
  if (!slash) return { text: message, notices: [] };
  const custom = await customCommandsForRun(root, trustFlag);
  const call = customCommandCall(message, custom.commands);
  if (call) return { text: call.message, notices: custom.notices, called: true };
  const refused = custom.refused?.find((file) => file.name === slash.name);
  if (refused) {
    // Sending the literal "/NAME" would spend a request on text the model cannot run.
    throw new UsageError(`/${slash.name} was not run: its command file was refused (${refused.why})`, { hint: "Fix the file (the note says what is wrong), then run the command again." });
  }
  if (custom.untrusted.includes(slash.name)) {
    throw new UsageError(`/${slash.name} is a project command (.valarmind/commands/${slash.name}.md) and this folder is not trusted, so it was not read`, {
      hint: "If you trust this repository, run 'valarmind trust', or pass --trust for one run.",
    });
  }
  return { text: message, notices: custom.notices };
}
