/**
 * The REPL app on the REAL core: `SessionChatController` + the real OpenAI client, talking over
 * HTTP to the fake Responses server, in a temp git workspace; rendered by ink-testing-library.
 *
 *   const h = await openRealApp({ files: { "src/a.ts": "..." } });   // closed by closeRealApps()
 *   h.server.enqueue(textStream("hi"));
 *   await h.send("hello");                 // types the text, then Enter
 *   await h.see("hi");                     // waits (bounded) until the screen shows it
 *   await h.idle();                        // until no turn or command is running
 *
 * Waits poll the latest frame (which holds the <Static> scrollback too: ink-testing-library renders
 * in debug mode) until a condition holds, and fail with the last frame after a bounded time;
 * nothing sleeps a fixed time before asserting.
 */
import { render } from "ink-testing-library";
import type { Settings } from "../../../src/config/settings-schema.ts";
import { SessionChatController } from "../../../src/cli/chat/chat-controller.ts";
import type { ModelClient } from "../../../src/model/types.ts";
import type { ResumeTarget } from "../../../src/memory/session-memory.ts";
import { App } from "../../../src/ui/app.tsx";
import { fakeModel, makeGitWorkspace, testSettings } from "../../agent/support/agent-harness.ts";
import { startFakeResponsesServer, type FakeResponsesServer } from "../../support/fake-responses-server.ts";
import { KEYS } from "../ink-harness.tsx";

export { KEYS };

/** Generous for a loaded 2-core machine; only reached when a test is about to fail anyway. */
const WAIT_MS = 8_000;

export interface RealAppOptions {
  files?: Record<string, string>;
  settings?: Partial<Settings>;
  /** Defaults to the real OpenAI client on the fake server's base URL. */
  model?: ModelClient;
  warnings?: string[];
  /** An existing workspace (one an earlier app wrote sessions in) instead of a new one. */
  root?: string;
  /** Which session to open; a new one by default. */
  resume?: ResumeTarget;
}

export interface RealApp {
  root: string;
  server: FakeResponsesServer;
  controller: SessionChatController;
  /** The latest frame: scrollback and live area. */
  frame(): string;
  /** Polls until `check` holds; fails with `what` and the last frame after a bounded time. */
  until(check: () => boolean, what: string): Promise<void>;
  see(text: string): Promise<void>;
  /** Until neither a turn nor a slash command is running and the prompt is back. */
  idle(): Promise<void>;
  /** Writes each chunk as one terminal read, after the effects of the previous render have run. */
  keys(...chunks: string[]): Promise<void>;
  /** Types `text` (one read) and presses Enter. */
  send(text: string): Promise<void>;
  exited(): boolean;
}

const opened: Array<{ unmount: () => void; controller: SessionChatController; server: FakeResponsesServer }> = [];

/** ink attaches input handlers in passive effects; one macrotask lets them run after a render. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

export async function waitFor(check: () => boolean, what: string, frame: () => string, timeoutMs = WAIT_MS): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}\n--- last frame ---\n${frame()}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

export async function openRealApp(options: RealAppOptions = {}): Promise<RealApp> {
  const root = options.root ?? (await makeGitWorkspace(options.files ?? {}));
  const server = startFakeResponsesServer();
  const controller = await SessionChatController.open({
    root,
    settings: testSettings(options.settings),
    model: options.model ?? fakeModel(server),
    interactive: true,
    resume: options.resume ?? { kind: "new" },
    warnings: options.warnings ?? [],
  });
  let exited = false;
  const app = render(<App controller={controller} frameMs={0} onExit={() => (exited = true)} />);
  opened.push({ unmount: app.unmount, controller, server });

  const frame = () => app.lastFrame() ?? "";
  const until = (check: () => boolean, what: string) => waitFor(check, what, frame);
  const keys = async (...chunks: string[]) => {
    for (const chunk of chunks) {
      await nextTurn();
      app.stdin.write(chunk);
    }
    await nextTurn();
  };
  const idle = () =>
    until(() => {
      const now = frame();
      return now.includes("Ask anything") && !now.includes("working ·") && !now.includes("running /") && !now.includes("Esc denies");
    }, "the REPL to be idle");
  await idle();
  return {
    root,
    server,
    controller,
    frame,
    until,
    see: (text) => until(() => frame().includes(text), JSON.stringify(text)),
    idle,
    keys,
    send: (text) => keys(text, KEYS.enter),
    exited: () => exited,
  };
}

/** Unmounts every app opened by the test, closes its controller and its server (afterEach). */
export async function closeRealApps(): Promise<void> {
  for (const entry of opened.splice(0)) {
    entry.unmount();
    await entry.controller.close();
    await entry.server.close();
  }
}
