/**
 * The stdio transport for MCP servers valarmind starts. Like the SDK's, it speaks newline-framed
 * JSON-RPC over the child's stdin and stdout and gives it a minimal environment; unlike it, the
 * server runs in a process group of its own, so closing ends whatever the server started too
 * (`npx` and its node, a shell and its children): stdin is closed, then the group gets SIGTERM,
 * then SIGKILL. If valarmind exits without closing, an exit hook sends the groups SIGTERM. Its
 * stderr is kept (the last 2 KiB) to say why a server failed, never shown over the REPL.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import { serializeMessage, STDIO_DEFAULT_MAX_BUFFER_SIZE } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { JSONRPCMessageSchema, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { oneLine } from "../one-line.ts";

export interface StdioServerParams {
  command: string;
  args: readonly string[];
  /** Added to the minimal environment (HOME, LOGNAME, PATH, SHELL, TERM, USER). */
  env: Record<string, string>;
  cwd: string;
}

const STDERR_TAIL_CHARS = 2048;
/** One message is at most this much (STDIO_DEFAULT_MAX_BUFFER_SIZE, as in the SDK's transport). */
const MAX_MESSAGE_MB = STDIO_DEFAULT_MAX_BUFFER_SIZE / (1024 * 1024);
const EXIT_AFTER_STDIN_MS = 500;
const EXIT_AFTER_TERM_MS = 1000;

/** Process groups started and not yet closed: ended by the exit hook if valarmind leaves first. */
const liveGroups = new Set<number>();
let exitHookInstalled = false;

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: nobody left in the group.
  }
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", () => {
    for (const pid of liveGroups) signalGroup(pid, "SIGTERM");
  });
}

function exited(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

export class ProcessGroupStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private child: ChildProcess | undefined;
  private readonly buffer = new LineBuffer();
  private stderr = "";
  private closed = false;
  private closing: Promise<void> | undefined;
  /** How the process ended, once it has. */
  exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  /**
   * Why the transport ended the server itself (it broke the protocol), for a notice: its exit
   * status then only says how it took being stopped. Undefined when valarmind closed it or it left.
   */
  closedBecause: string | undefined;

  constructor(private readonly params: StdioServerParams) {}

  start(): Promise<void> {
    if (this.child) throw new Error("the MCP server process was already started");
    return new Promise((resolve, reject) => {
      const child = spawn(this.params.command, [...this.params.args], {
        cwd: this.params.cwd,
        env: { ...getDefaultEnvironment(), ...this.params.env },
        stdio: ["pipe", "pipe", "pipe"],
        detached: true,
        shell: false,
      });
      this.child = child;
      child.once("error", (error) => {
        reject(error);
        this.onerror?.(error);
      });
      child.once("spawn", () => {
        if (child.pid !== undefined) {
          installExitHook();
          liveGroups.add(child.pid);
        }
        resolve();
      });
      child.once("exit", (code, signal) => {
        this.exit = { code, signal };
        this.finish();
      });
      child.stdout?.on("data", (chunk: Buffer) => {
        try {
          this.buffer.append(chunk);
        } catch (error) {
          // One message over the buffer's 10 MB: the stream cannot be resynchronised, so the server ends.
          this.closedBecause ??= `it sent a message over valarmind's limit of ${MAX_MESSAGE_MB} MB for one message, so valarmind stopped it`;
          this.onerror?.(error instanceof Error ? error : new Error(String(error)));
          void this.close();
          return;
        }
        this.readMessages();
      });
      child.stderr?.on("data", (chunk: Buffer) => {
        this.stderr = (this.stderr + chunk.toString("utf8")).slice(-STDERR_TAIL_CHARS);
      });
      child.stdin?.on("error", (error) => this.onerror?.(error));
    });
  }

  private readMessages(): void {
    for (let line = this.buffer.nextLine(); line !== undefined; line = this.buffer.nextLine()) {
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch (error) {
        // A line that is not JSON-RPC (a stray print) is reported and skipped.
        this.onerror?.(error instanceof Error ? error : new Error(String(error)));
        continue;
      }
      const parsed = JSONRPCMessageSchema.safeParse(value);
      if (parsed.success) {
        this.onmessage?.(parsed.data);
        continue;
      }
      // One that answers a request by its id, but malformed ("result": null, a string "error"),
      // fails that request now: skipped, the caller would wait out its whole timeout for it.
      const id = idOf(value);
      if (id !== undefined) this.onmessage?.({ jsonrpc: "2.0", id, error: { code: -32603, message: `the server's answer was not valid JSON-RPC (${oneLine(parsed.error.message, 200)})` } });
      else this.onerror?.(parsed.error);
    }
  }

  /** Waits up to `ms` for the process to end on its own; true once it has. */
  async exitedWithin(ms: number): Promise<boolean> {
    return this.child !== undefined && (await exited(this.child, ms));
  }

  /** Why the process is gone, for a notice: its exit status and the end of its stderr. */
  describeExit(): string | undefined {
    if (!this.exit) return undefined;
    const status = this.exit.signal !== null ? `ended by ${this.exit.signal}` : `exited with code ${this.exit.code ?? "?"}`;
    const last = this.stderr.trim().split("\n").slice(-3).join(" | ");
    return last === "" ? status : `${status}; its stderr ended with: ${last}`;
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || this.closed || this.exit) return Promise.reject(new Error("the MCP server process is not running"));
    return new Promise((resolve, reject) => {
      stdin.write(serializeMessage(message), (error) => (error ? reject(error) : resolve()));
    });
  }

  /** Ends the process group; every call waits for the same ending. */
  close(): Promise<void> {
    this.closing ??= this.end();
    return this.closing;
  }

  private async end(): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.closed = true;
    const pid = child.pid;
    child.stdin?.end();
    if (pid !== undefined) {
      if (!(await exited(child, EXIT_AFTER_STDIN_MS))) {
        signalGroup(pid, "SIGTERM");
        await exited(child, EXIT_AFTER_TERM_MS);
      }
      // Whatever the server started and left in its group goes with it.
      signalGroup(pid, "SIGKILL");
      liveGroups.delete(pid);
    }
    this.finish();
  }

  private finish(): void {
    const notify = this.onclose;
    this.onclose = undefined;
    this.buffer.clear();
    notify?.();
  }
}

/**
 * Newline-framed messages from the server's stdout, as the SDK's ReadBuffer frames them (at most
 * STDIO_DEFAULT_MAX_BUFFER_SIZE for one), but handing out each line: a line that is not a valid
 * JSON-RPC message may still name the request it answers.
 */
class LineBuffer {
  private pending: Buffer | undefined;

  append(chunk: Buffer): void {
    if ((this.pending?.length ?? 0) + chunk.length > STDIO_DEFAULT_MAX_BUFFER_SIZE) {
      this.clear();
      throw new Error(`ReadBuffer exceeded maximum size of ${STDIO_DEFAULT_MAX_BUFFER_SIZE} bytes`);
    }
    this.pending = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
  }

  /** The next whole line (without its \r\n or \n), or undefined until one has arrived. */
  nextLine(): string | undefined {
    const end = this.pending?.indexOf("\n") ?? -1;
    if (!this.pending || end === -1) return undefined;
    const line = this.pending.toString("utf8", 0, end).replace(/\r$/, "");
    this.pending = this.pending.subarray(end + 1);
    return line;
  }

  clear(): void {
    this.pending = undefined;
  }
}

/** The id a JSON value carries as a JSON-RPC id, if any. */
function idOf(value: unknown): string | number | undefined {
  const id = (value as { id?: unknown } | null)?.id;
  return typeof id === "string" || (typeof id === "number" && Number.isFinite(id)) ? id : undefined;
}
