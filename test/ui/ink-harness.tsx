/** Drives the REPL through ink-testing-library: type keys, paste, wait for what the screen shows. */
import { render } from "ink-testing-library";
import { App, type AppProps } from "../../src/ui/app.tsx";
import { FakeController, type FakeControllerOptions } from "../support/fake-controller.ts";

export const KEYS = {
  enter: "\r",
  altEnter: "\u001b\r",
  ctrlJ: "\n",
  escape: "\u001b",
  up: "\u001b[A",
  down: "\u001b[B",
  left: "\u001b[D",
  tab: "\t",
  backspace: "\u007f",
  ctrlC: "\u0003",
  ctrlD: "\u0004",
} as const;

export function bracketedPaste(text: string): string {
  return `\u001b[200~${text}\u001b[201~`;
}

/** Polls (no fixed sleeps) until `check` holds; fails with what was awaited and the last frame. */
export async function waitUntil(
  check: () => boolean,
  what: string,
  frame?: () => string,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n--- last frame ---\n${frame?.() ?? ""}`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

export function renderApp(options: FakeControllerOptions = {}, props: Partial<AppProps> = {}) {
  const controller = new FakeController(options);
  let exited = 0;
  const app = render(<App controller={controller} frameMs={0} onExit={() => exited++} {...props} />);
  /** Everything printed so far: <Static> output plus the latest frame. */
  const screen = () => app.frames.join("\n");
  const frame = () => app.lastFrame() ?? "";
  const type = (text: string) => app.stdin.write(text);
  const see = (text: string, where: () => string = screen) =>
    waitUntil(() => where().includes(text), `"${text}"`, frame);
  return {
    app,
    controller,
    screen,
    frame,
    type,
    see,
    exitCount: () => exited,
    /**
     * Writes keys one chunk at a time, as a terminal would deliver them. Each write waits one
     * event-loop turn first, so React's passive effects (ink attaches input listeners in them)
     * have run for whatever the previous key brought on screen.
     */
    async keys(...chunks: string[]) {
      for (const chunk of chunks) {
        await new Promise((resolve) => setImmediate(resolve));
        app.stdin.write(chunk);
      }
      await new Promise((resolve) => setImmediate(resolve));
    },
  };
}
