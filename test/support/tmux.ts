/**
 * A real terminal for tests: a detached tmux session on its own server socket (no user config,
 * no shared server), running a plain bash in which the test types commands. The bash runs
 * without readline (--noediting), so it never changes the tty modes itself: what `stty` shows
 * after a program exits is what that program left.
 *
 *   requireTmux();                                        // throws, saying to install tmux, if missing
 *   const term = await TmuxTerminal.start({ cwd: root, env: { NO_COLOR: "1" }, columns: 100, rows: 30 });
 *   await term.type("bun src/cli/main.ts chat"); await term.press("Enter");
 *   await term.waitFor((screen) => screen.includes("Ask anything"), "the prompt");
 *   await term.termios();                                 // `stty -a` of the pane's tty, read from outside
 *   await term.kill();                                    // always, in afterEach (killTerminals())
 *
 * Waits poll `capture-pane` until a condition holds and fail after a bounded time with the screen;
 * tmux commands run asynchronously so an in-process fake server keeps answering meanwhile.
 */

export const TMUX_MISSING =
  "tmux is not installed, and the real-terminal REPL test needs it: install tmux (e.g. `apt-get install tmux`; `.ci/run` installs it in CI)";

/** Throws with what to do when tmux is not on PATH; the test must not pass silently without it. */
export function requireTmux(): string {
  const path = Bun.which("tmux");
  if (!path) throw new Error(TMUX_MISSING);
  return path;
}

export interface TerminalOptions {
  cwd: string;
  /** The whole environment of the shell in the pane (the tmux server is started with it). */
  env: Record<string, string>;
  columns?: number;
  rows?: number;
}

/** Flags `stty -a` reports for a tty: `icanon` → true, `-icanon` → false. */
export type Termios = Map<string, boolean>;

export function parseStty(text: string): Termios {
  const flags: Termios = new Map();
  for (const word of text.split(/[\s;]+/)) {
    const match = /^(-?)([a-z0-9]+)$/.exec(word);
    if (match?.[2]) flags.set(match[2], match[1] === "");
  }
  return flags;
}

const live = new Set<TmuxTerminal>();
let counter = 0;

async function run(args: readonly string[], env?: Record<string, string>): Promise<string> {
  const child = Bun.spawn(["tmux", ...args], { stdout: "pipe", stderr: "pipe", stdin: "ignore", ...(env ? { env } : {}) });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  if (code !== 0) throw new Error(`tmux ${args.join(" ")} exited ${code}: ${stderr.trim()}`);
  return stdout;
}

export class TmuxTerminal {
  private constructor(
    /** The tmux server socket name (-L): one per terminal. */
    readonly socket: string,
    readonly session: string,
    readonly tty: string,
  ) {}

  static async start(options: TerminalOptions): Promise<TmuxTerminal> {
    requireTmux();
    const id = `valarmind-test-${process.pid}-${++counter}-${Math.random().toString(36).slice(2, 8)}`;
    const env = { ...options.env };
    delete env.TMUX;
    await run(
      [
        "-L", id, "-f", "/dev/null",
        "new-session", "-d", "-s", id,
        "-x", String(options.columns ?? 100), "-y", String(options.rows ?? 30),
        "-c", options.cwd,
        "bash --noprofile --norc --noediting",
      ],
      env,
    );
    const tty = (await run(["-L", id, "display-message", "-p", "-t", id, "#{pane_tty}"])).trim();
    const terminal = new TmuxTerminal(id, id, tty);
    live.add(terminal);
    return terminal;
  }

  private tmux(...args: string[]): Promise<string> {
    return run(["-L", this.socket, ...args]);
  }

  /** Types `text` literally (no key names). */
  async type(text: string): Promise<void> {
    await this.tmux("send-keys", "-t", this.session, "-l", text);
  }

  /** Presses keys by tmux name: "Enter", "C-d", "Escape", "y". */
  async press(...keys: string[]): Promise<void> {
    await this.tmux("send-keys", "-t", this.session, ...keys);
  }

  /** The visible screen, wrapped lines joined. */
  screen(): Promise<string> {
    return this.tmux("capture-pane", "-p", "-J", "-t", this.session);
  }

  /** The scrollback and the screen. */
  history(): Promise<string> {
    return this.tmux("capture-pane", "-p", "-J", "-S", "-", "-t", this.session);
  }

  /** A tmux format of the pane, e.g. "#{cursor_flag}" (1 when the cursor is visible). */
  async format(format: string): Promise<string> {
    return (await this.tmux("display-message", "-p", "-t", this.session, format)).trim();
  }

  /** The pane tty's terminal modes, read with `stty -F` from outside the pane. */
  async termios(): Promise<Termios> {
    const child = Bun.spawn(["stty", "-a", "-F", this.tty], { stdout: "pipe", stderr: "pipe", stdin: "ignore" });
    const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
    if (code !== 0) throw new Error(`stty -a -F ${this.tty} exited ${code}: ${stderr.trim()}`);
    return parseStty(stdout);
  }

  /**
   * Polls the scrollback and screen until `check` holds; returns that capture. Fails after
   * `timeoutMs` with `what` and the last capture.
   */
  async waitFor(check: (text: string) => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<string> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const text = await this.history();
      if (await check(text)) return text;
      if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}\n--- terminal ---\n${text}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** Kills the session (and with it this socket's server). Safe to call twice. */
  async kill(): Promise<void> {
    if (!live.delete(this)) return;
    try {
      await run(["-L", this.socket, "kill-server"]);
    } catch (error) {
      // The server ends by itself when its last pane exits; only that case is expected here.
      if (!/no server running|error connecting/.test(String(error))) throw error;
    }
  }
}

/** Kills every terminal still open (afterEach). */
export async function killTerminals(): Promise<void> {
  await Promise.all([...live].map((terminal) => terminal.kill()));
}

/**
 * The environment for running `valarmind chat` in a pane: the parent's, without anything that
 * could change the run (OPENAI_*, VALARMIND_*, budgets, an outer TMUX), plus NO_COLOR, a known
 * TERM, the given user config directory and the fake server's base URL.
 */
export function chatTerminalEnvironment(configDir: string, baseURL: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value === undefined || name.startsWith("OPENAI_") || name.startsWith("VALARMIND_") || name === "TMUX") continue;
    if (name === "MAX_CONTEXT_TOKENS" || name === "SHORT_BUFFER_TURNS") continue;
    env[name] = value;
  }
  return { ...env, NO_COLOR: "1", TERM: "xterm-256color", XDG_CONFIG_HOME: configDir, OPENAI_BASE_URL: baseURL };
}
