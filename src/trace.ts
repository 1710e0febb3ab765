/**
 * Start-up and turn timing for people who want to know where the time goes:
 * `VALARMIND_TRACE=1 valarmind chat -p ...` prints `[+ms] label` lines to stderr, measured from
 * process start. Off by default and free when off.
 */
const enabled = process.env.VALARMIND_TRACE === "1";

export function trace(label: string): void {
  if (!enabled) return;
  process.stderr.write(`[+${performance.now().toFixed(1)}ms] ${label}\n`);
}
