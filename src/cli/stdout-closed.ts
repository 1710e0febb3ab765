/**
 * A reader that stops early (`valarmind chat -p ... --json | head`) closes our stdout; the next
 * write fails with EPIPE. That is the reader's choice, not a failure: nothing more is printed and
 * no stack trace is shown. A command with work in flight (a headless turn) registers
 * `onStdoutClosed` to stop printing and finish recording first, then exits with the code its
 * outcome has (with `set -o pipefail` a failed turn still fails the pipeline); otherwise the
 * process exits at once, with the exit code already decided (0 if none).
 *
 * A stdout that cannot be written for another reason (a full disk: `> answer.txt`, `> /dev/full`)
 * is said once on stderr, and the run ends with exit 1. A stderr whose reader went away
 * (`2>&1 | head`) is not an error at all: its notes had nowhere else to go.
 */
let whenClosed: ((failed: boolean) => void) | undefined;

/** While set, a closed or failing stdout calls `handler` (once; `failed` for an error other than EPIPE) instead of exiting. */
export function onStdoutClosed(handler: ((failed: boolean) => void) | undefined): void {
  whenClosed = handler;
}

export function endQuietlyWhenStdoutCloses(stream: NodeJS.WriteStream = process.stdout, exit: (code: number) => void = process.exit, stderr: NodeJS.WriteStream = process.stderr): void {
  let closed = false;
  stream.on("error", (error: NodeJS.ErrnoException) => {
    // Later writes fail the same way: the first one decides.
    if (closed) return;
    closed = true;
    const failed = error.code !== "EPIPE";
    if (failed) stderr.write(`valarmind: cannot write to standard output: ${error.message}\n`);
    if (whenClosed) whenClosed(failed);
    else exit(failed ? 1 : typeof process.exitCode === "number" ? process.exitCode : 0);
  });
  stderr.on("error", () => {});
}
