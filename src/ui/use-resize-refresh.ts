/**
 * After the terminal is resized, the whole REPL is drawn again at the new size.
 *
 * ink erases its previous frame by the number of rows it drew. A resize makes the terminal
 * re-wrap what is on screen (long status or answer lines take more rows when it narrows, fewer
 * when it widens), so that count no longer matches: stale copies of the prompt, the status line or
 * the "working" line stay on screen, and a storm of resizes (dragging a window edge) piles them up.
 * The finished transcript in <Static> was laid out for the old width as well.
 *
 * So once the resizes settle (no new one for `settleMs`), the screen and its scrollback are
 * cleared, and <Static> is remounted under a new key, which prints every finished item again at
 * the new width. ink then draws the live frame below it from a clean screen. This is what Gemini
 * CLI does (a history remount key after a debounced clear); the cost is the terminal's scrollback
 * from before the REPL started, which a clear of the screen alone would leave holding a second,
 * differently wrapped copy of the transcript.
 *
 *   const staticKey = useResizeRefresh();
 *   <Static key={staticKey} items={items}>…</Static>
 */
import { useStdout } from "ink";
import { useEffect, useState } from "react";

/** Quiet time after the last resize before the REPL is drawn again. */
export const RESIZE_SETTLE_MS = 200;

/** ED 2 (the screen), ED 3 (the scrollback), cursor home. */
export const CLEAR_SCREEN_AND_SCROLLBACK = "\u001b[2J\u001b[3J\u001b[H";

/** A key for <Static> that changes once the terminal has been resized and has settled. */
export function useResizeRefresh(settleMs = RESIZE_SETTLE_MS): number {
  const { stdout } = useStdout();
  const [key, setKey] = useState(0);
  useEffect(() => {
    if ((stdout as NodeJS.WriteStream).isTTY !== true) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let closed = false;
    const redraw = () => {
      timer = undefined;
      // The clear reaches the terminal before the remount's frame is written.
      stdout.write(CLEAR_SCREEN_AND_SCROLLBACK, () => {
        if (!closed) setKey((k) => k + 1);
      });
    };
    const onResize = () => {
      if (timer !== undefined) clearTimeout(timer);
      timer = setTimeout(redraw, settleMs);
    };
    stdout.on("resize", onResize);
    return () => {
      closed = true;
      stdout.off("resize", onResize);
      if (timer !== undefined) clearTimeout(timer);
    };
  }, [stdout, settleMs]);
  return key;
}
