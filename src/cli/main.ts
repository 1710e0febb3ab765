/**
 * Entry point. Only commander and the light command definitions load here; every command's
 * action imports its heavy modules (ink, react, openai, the tokenizer) lazily, so `--version`
 * and `compact` start fast.
 */
import { Command, CommanderError } from "commander";
import pkg from "../../package.json" with { type: "json" };
import { reportFailure } from "./report-failure.ts";
import { endQuietlyWhenStdoutCloses } from "./stdout-closed.ts";
import { UsageError } from "../errors.ts";
import { trace } from "../trace.ts";
import { registerInit } from "./commands/init.ts";
import { registerState } from "./commands/state.ts";
import { registerCompact } from "./commands/compact.ts";
import { registerPrompt } from "./commands/prompt.ts";
import { registerChat } from "./commands/chat.ts";
import { registerSessions } from "./commands/sessions.ts";
import { registerTrust } from "./commands/trust.ts";
import { registerStatus } from "./commands/status.ts";
import { registerMcp } from "./commands/mcp.ts";
import { registerUndo } from "./commands/undo.ts";
import { registerCompletion } from "./commands/completion.ts";
import { registerStore } from "../store/store-command.ts";

trace(`main: modules loaded (${import.meta.path})`);
endQuietlyWhenStdoutCloses();
// Past a file-size limit (ulimit -f) a write fails with EFBIG, which the code reports and recovers
// from (an undo puts its files back); left to its default, SIGXFSZ (re-raised by proper-lockfile's
// signal-exit) would end the process silently, halfway.
process.on("SIGXFSZ", () => {});
const program = new Command();
program
  .name("valarmind")
  .description("A coding agent whose memory you can see: working state, sliding window, and a manifest for every model call.")
  .version(pkg.version, "-v, --version", "print the version")
  .option("-C, --cwd <dir>", "run as if started in <dir>")
  .showHelpAfterError("(run valarmind --help for usage)")
  .exitOverride();

program.hook("preAction", (thisCommand) => {
  const dir = thisCommand.opts<{ cwd?: string }>().cwd;
  if (dir === undefined) return requireCurrentDirectory();
  try {
    process.chdir(dir);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const why = code === "ENOENT" ? "no such directory" : code === "ENOTDIR" ? "not a directory" : code === "EACCES" ? "permission denied" : String(code);
    throw new UsageError(`-C ${dir}: cannot change into it (${why})`, { hint: "Pass an existing directory to -C / --cwd." });
  }
});

/** A shell left in a directory that was removed: said as what it is, not as a stack trace. */
function requireCurrentDirectory(): void {
  try {
    process.cwd();
  } catch {
    throw new UsageError("the current directory no longer exists (it was removed or renamed)", { hint: "cd into an existing directory, or pass -C DIR, and run the command again." });
  }
}

registerInit(program);
registerState(program);
registerCompact(program);
registerPrompt(program);
registerChat(program);
registerSessions(program);
registerTrust(program);
registerStatus(program);
registerMcp(program);
registerUndo(program);
registerStore(program);
registerCompletion(program);

/**
 * `valarmind help NAME` for a NAME that is no command is parsed as `valarmind NAME`: commander's
 * own "unknown command 'NAME'" with its suggestion, where `help` alone printed the whole help.
 */
function withoutHelpOfUnknown(argv: readonly string[]): string[] {
  const topic = argv[3];
  if (argv[2] !== "help" || topic === undefined || topic.startsWith("-")) return [...argv];
  const known = program.commands.some((command) => command.name() === topic || command.aliases().includes(topic));
  return known ? [...argv] : [...argv.slice(0, 2), ...argv.slice(3)];
}

try {
  await program.parseAsync(withoutHelpOfUnknown(process.argv));
} catch (error) {
  if (error instanceof CommanderError) {
    // --help and --version end here with exit code 0; usage errors were already printed.
    process.exit(error.exitCode === 0 ? 0 : 2);
  }
  process.exit(reportFailure(error));
}
