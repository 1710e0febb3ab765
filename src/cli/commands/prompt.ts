import type { Command } from "commander";
import { parseBudgetFlag } from "../budget-flag.ts";
import { UsageError } from "../../errors.ts";
import { once } from "./once-option.ts";

/** `valarmind prompt`: options only; the work is imported lazily from ../prompt/run-prompt.ts. */
export function registerPrompt(program: Command): void {
  program
    .command("prompt")
    .description("build the next request offline and show what goes in, why, and what was cut; inspect past manifests")
    .argument("[message...]", "the next user message (for --dry-run)")
    .option("--dry-run", "build the next request for the current session offline (the default; nothing is sent or written)")
    .option("--json", "print the manifest (or the list / diff) as JSON")
    .option("--show-prompt", "print the exact request body")
    .option("--all", "list every item, not groups")
    .option("--list", "list the manifests of the session's model calls")
    .option("--show <n>", "show a past manifest: a number from --list, -1 for the latest, or TURN-STEP", once)
    .option("--diff <manifests...>", "compare two past manifests: --diff A B")
    .option("--session <id>", "the session to use (default: the latest)", once)
    .option("--budget <n>", "token budget for this build (overrides maxContextTokens)", once)
    .option("--tokens <mode>", "how to count: local (exact o200k) or api (also ask POST /responses/input_tokens)", "local")
    .option("--no-context-files", "with --dry-run: read no instruction file (AGENTS.md, CLAUDE.md, VALARMIND.md, VALARMIND.local.md), as chat --no-context-files")
    .addHelpText("after", '\nExamples:\n  valarmind prompt --dry-run "fix the failing test"\n  valarmind prompt --dry-run "..." --show-prompt > request.json\n  valarmind prompt --list\n  valarmind prompt --diff -2 -1\n')
    .action(async (words: string[], opts: Record<string, unknown>) => {
      const budget = opts.budget !== undefined ? parseBudgetFlag(String(opts.budget)) : undefined;
      const tokens = opts.tokens;
      if (tokens !== "local" && tokens !== "api") throw new UsageError(`--tokens must be 'local' or 'api', got ${JSON.stringify(tokens)}`);
      const inspecting = opts.list === true || typeof opts.show === "string" || Array.isArray(opts.diff);
      if (inspecting) {
        // Options of a build mean nothing to a list, a shown manifest or a diff: said, not ignored.
        const buildOnly = [
          ...(opts.dryRun === true ? ["--dry-run"] : []),
          ...(opts.showPrompt === true ? ["--show-prompt"] : []),
          ...(opts.budget !== undefined ? ["--budget"] : []),
          ...(opts.contextFiles === false ? ["--no-context-files"] : []),
        ];
        if (buildOnly.length > 0) {
          throw new UsageError(`${buildOnly.join(", ")} ${buildOnly.length === 1 ? "goes" : "go"} with building a request (--dry-run), not with --list, --show or --diff`, {
            hint: "Run 'valarmind prompt --dry-run …' for a build, and --list, --show or --diff on their own to inspect the manifests already written.",
          });
        }
      } else {
        // The dry run is read-only: a bad state.json is reported and left, never moved aside.
        const [{ findWorkspaceRoot, workspacePaths }, { createStateStore }, { requireValidState }] = await Promise.all([
          import("../../config/paths.ts"),
          import("../../store/create-state-store.ts"),
          import("../actions/require-valid-state.ts"),
        ]);
        requireValidState(await createStateStore(workspacePaths(findWorkspaceRoot())).read());
      }
      const { runPrompt } = await import("../manifest-reports/run-prompt.ts");
      process.exitCode = await runPrompt({
        message: words.length > 0 ? words.join(" ") : undefined,
        json: opts.json === true,
        showPrompt: opts.showPrompt === true,
        list: opts.list === true,
        show: typeof opts.show === "string" ? opts.show : undefined,
        diff: Array.isArray(opts.diff) ? opts.diff.map(String) : undefined,
        session: typeof opts.session === "string" ? opts.session : undefined,
        budget,
        tokens,
        all: opts.all === true,
        contextFiles: opts.contextFiles !== false,
      });
    });
}
