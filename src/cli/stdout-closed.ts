/**
 * A reader that stops early (`valarmind chat -p ... --json | head`) closes our stdout; the next
 * write fails with EPIPE. That is the reader's choice, not a failure: end quietly with exit 0,
 * as the README says, instead of an unhandled-error stack trace. What the session wrote (the
 * transcript is written synchronously) is already on disk.
 */
export function endQuietlyWhenStdoutCloses(stream: NodeJS.WriteStream = process.stdout, exit: (code: number) => void = process.exit): void {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") exit(0);
    else throw error;
  });
}
