/**
 * The commander program as plain data for the shell completion scripts: every command and
 * subcommand with its options, read through commander's own Help (what `--help` lists, the
 * implicit `help` command and `-h, --help` included), so a script cannot drift from the program.
 */
import type { Command } from "commander";

export interface CompletionOption {
  /** `-p`, `--print`: the short flag first when there is one. */
  flags: string[];
  description: string;
  /** The option is followed by a value (`--model <model>`, `--cwd <dir>`). */
  takesValue: boolean;
  /** The values it accepts, when commander knows them. */
  choices: string[];
}

export interface CompletionCommand {
  name: string;
  /** The command words after the program's name: `[]` for the program, `["state", "task"]`. */
  path: string[];
  description: string;
  options: CompletionOption[];
  commands: CompletionCommand[];
  /** The values its first argument accepts, when commander knows them (`completion <shell>`). */
  argumentChoices: string[];
}

/** The first line of a description: the scripts show one line per word. */
function firstLine(text: string): string {
  return (text.split("\n")[0] ?? "").trim();
}

export function commandTree(command: Command, path: string[] = []): CompletionCommand {
  const help = command.createHelp();
  const options = help.visibleOptions(command).map(
    (option): CompletionOption => ({
      flags: [option.short, option.long].filter((flag): flag is string => flag !== undefined),
      description: firstLine(option.description),
      takesValue: option.required || option.optional,
      choices: option.argChoices ?? [],
    }),
  );
  const commands = help.visibleCommands(command).map((sub) => commandTree(sub, [...path, sub.name()]));
  return {
    name: command.name(),
    path,
    description: firstLine(command.description()),
    options,
    commands,
    argumentChoices: command.registeredArguments[0]?.argChoices ?? [],
  };
}

/** Every command of the tree, the program first, parents before their subcommands. */
export function allCommands(tree: CompletionCommand): CompletionCommand[] {
  return [tree, ...tree.commands.flatMap(allCommands)];
}
