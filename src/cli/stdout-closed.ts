/**
 * A reader that stops early (`valarmind chat -p ... --json | head`) closes our stdout; the next
 * write fails with EPIPE. That is the reader's choice, not a failure: end quietly with exit 0,
 * as the README says, instead of an unhandled-error stack trace. A command with work in flight
 * (a headless turn) registers `onStdoutClosed` to wind it down and record it first; otherwise the
 * process exits at once.
 */
let whenClosed: (() => void) | undefined;

/** While set, a closed stdout calls `handler` (once) instead of exiting; unset with undefined. */
export function onStdoutClosed(handler: (() => void) | undefined): void {
  whenClosed = handler;
}

export function endQuietlyWhenStdoutCloses(stream: NodeJS.WriteStream = process.stdout, exit: (code: number) => void = process.exit): void {
  let closed = false;
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") throw error;
    // Later writes fail the same way: the first one decides.
    if (closed) return;
    closed = true;
    if (whenClosed) whenClosed();
    else exit(0);
  });
}
