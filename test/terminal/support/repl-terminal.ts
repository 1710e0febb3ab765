/**
 * The real REPL in a real terminal, for the terminal fault tests: `bin/valarmind chat` typed into a
 * tmux pane's shell (NO_COLOR, a private config dir, the fake Responses server's URL), its pid
 * from /proc, tmux commands TmuxTerminal has no method for (resize, paste), and the newest
 * transcript of a workspace.
 *
 *   const { term, pid } = await startChat({ root, baseURL: server.baseURL, size: { columns: 100, rows: 40 } });
 *   afterEach(async () => { await killTerminals(); killStartedRepls(); });
 *   await tmuxIn(term, "resize-window", "-t", term.session, "-x", "60", "-y", "40");
 *   expect(EXIT_MARK.exec(await term.history())?.[1]).toBe("0");
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { makeTempDir } from "../../support/cli.ts";
import { chatTerminalEnvironment, TmuxTerminal, type Termios } from "../../support/tmux.ts";

export const BIN = resolve(import.meta.dir, "../../../bin/valarmind");
/** The shell prints this after the CLI exits; the typed command line itself cannot match it. */
export const EXIT_MARK = /EXIT:(\d+):END/;
/** A stack trace printed by a crash (`    at fn (file:1:2)`). */
export const STACK = /^\s+at .+:\d+/m;
export const HAS_TMUX = Bun.which("tmux") !== null;

export function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined;
  }
}

export function childrenOf(pid: number): number[] {
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((child) => Number(statFields(child)?.[1]) === pid);
}

/** Running (a zombie has exited: only its parent has not collected it yet). */
export function alive(pid: number): boolean {
  const state = statFields(pid)?.[0];
  return state !== undefined && state !== "Z";
}

export const on = (modes: Termios, flag: string) => modes.get(flag) === true;

/** A tmux command on the terminal's own server (TmuxTerminal has no paste or resize of its own). */
export async function tmuxIn(term: TmuxTerminal, ...args: string[]): Promise<string> {
  const child = Bun.spawn(["tmux", "-L", term.socket, ...args], { stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  if (code !== 0) throw new Error(`tmux ${args.join(" ")} exited ${code}: ${stderr.trim()}`);
  return stdout;
}

export interface StartChat {
  root: string;
  baseURL: string;
  /** After `chat` on the command line. */
  args?: string;
  size?: { columns: number; rows: number };
}

/**
 * Starts `bin/valarmind chat ARGS` in a new terminal, typed into its shell as
 * `'BIN' chat ARGS; echo "EXIT:$?:END"`; resolves once the prompt is up and the tty is raw.
 */
export async function startChat(options: StartChat): Promise<{ term: TmuxTerminal; pid: number }> {
  const env = chatTerminalEnvironment(await makeTempDir("valarmind-terminal-config-"), options.baseURL);
  // bin/valarmind finds bun on PATH.
  const term = await TmuxTerminal.start({
    cwd: options.root,
    env: { ...env, PATH: `${dirname(process.execPath)}:${env.PATH ?? "/usr/bin:/bin"}` },
    ...(options.size ?? { columns: 100, rows: 30 }),
  });
  const shell = Number(await term.format("#{pane_pid}"));
  await term.type(`'${BIN}' chat ${options.args ?? ""}; echo "EXIT:$?:END"`);
  await term.press("Enter");
  await term.waitFor((text) => text.includes("Ask anything"), "the REPL's prompt", 15_000);
  await term.waitFor(async () => !on(await term.termios(), "icanon"), "raw mode on the pane's tty");
  // bin/valarmind execs bun: the shell's only child is the REPL.
  const pid = childrenOf(shell)[0];
  if (pid === undefined) throw new Error("no valarmind process under the pane's shell");
  started.add(pid);
  return { term, pid };
}

/** REPL processes started since the last killStartedRepls. */
const started = new Set<number>();

/**
 * After each test: a REPL that did not exit (a failing case) would hold the fake server's stream
 * open, so what is still running is killed, by pid (killTerminals ends the panes).
 */
export function killStartedRepls(): void {
  for (const pid of started) if (alive(pid)) process.kill(pid, "SIGKILL");
  started.clear();
}

/** The newest transcript of the workspace (not a `.damaged.jsonl` side file): its id and records. */
export function newestTranscript(root: string): { id: string; records: Array<Record<string, unknown>> } {
  const dir = join(root, ".valarmind/sessions");
  const file = readdirSync(dir)
    .filter((name) => name.endsWith(".jsonl") && !name.endsWith(".damaged.jsonl"))
    .sort()
    .at(-1);
  if (!file) throw new Error(`no transcript in ${dir}`);
  const records = readFileSync(join(dir, file), "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { id: /-([a-z0-9]+)\.jsonl$/.exec(file)?.[1] ?? "", records };
}

/** Occurrences of `needle` in `text`. */
export const count = (text: string, needle: string) => text.split(needle).length - 1;
/** Whitespace runs as one space: a line the terminal wrapped reads whole. */
export const flat = (text: string) => text.replace(/\s+/g, " ");
/** The status lines on a screen. */
export const statusLines = (screen: string) => screen.split("\n").filter((line) => / · prompt \d/.test(line));
/** One prompt and one status line on screen, no working line: a frame with nothing stale left. */
export const oneFrame = (screen: string) => count(screen, "Ask anything") === 1 && statusLines(screen).length === 1 && !screen.includes("Esc to interrupt");

/** Resolves true once `check` holds of the scrollback and screen, false after `timeoutMs` (no throw). */
export async function within(term: TmuxTerminal, check: (text: string) => boolean | Promise<boolean>, timeoutMs: number): Promise<boolean> {
  return term.waitFor(check, "a condition", timeoutMs).then(
    () => true,
    () => false,
  );
}
