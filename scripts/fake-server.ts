#!/usr/bin/env bun
/**
 * Starts the fake Responses server standalone, for manual and tmux tests of the REPL and `chat -p`:
 *
 *   bun scripts/fake-server.ts --port 0                 # prints its base URL, e.g. http://127.0.0.1:41234/v1
 *   OPENAI_BASE_URL=http://127.0.0.1:41234/v1 valarmind chat
 *
 * Options:
 *   --port N         port on 127.0.0.1 (0, the default, picks a free one)
 *   --script FILE    JSONL answers, one per request (format: test/support/fake-script-file.ts);
 *                    when it runs out, the echo responder takes over
 *   --log FILE       append every request received as one JSON line (path, body)
 *   --frame-delay MS pause before each SSE event, to watch answers stream in a terminal
 *   --quiet          no per-request line on stderr
 *
 * The echo responder answers "echo: <last user message>", or, after tool calls, a summary of their
 * outputs; its usage has exact input token counts and simulated prompt caching. Stops on SIGINT/SIGTERM.
 */
import { appendFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { textStream, startFakeResponsesServer, type RecordedRequest } from "../test/support/fake-responses-server.ts";
import { readScriptFile, scriptLineToResponse, type ScriptLine } from "../test/support/fake-script-file.ts";
import { lastUserText, toolOutputsThisTurn } from "../test/support/request-view.ts";
import { createUsageSimulator } from "../test/support/usage-simulation.ts";

function fail(message: string): never {
  process.stderr.write(`fake-server: ${message}\n`);
  process.exit(2);
}

let args: ReturnType<typeof parse>;
function parse() {
  return parseArgs({
    options: {
      port: { type: "string", default: "0" },
      script: { type: "string" },
      log: { type: "string" },
      "frame-delay": { type: "string", default: "0" },
      quiet: { type: "boolean", default: false },
    },
    strict: true,
  });
}
try {
  args = parse();
} catch (error) {
  fail(`${error instanceof Error ? error.message : String(error)} (options: --port N, --script FILE, --log FILE, --frame-delay MS, --quiet)`);
}

const port = Number(args.values.port);
if (!Number.isInteger(port) || port < 0 || port > 65535) fail(`--port ${args.values.port}: expected an integer 0-65535`);

const frameDelayMs = Number(args.values["frame-delay"]);
if (!Number.isFinite(frameDelayMs) || frameDelayMs < 0) fail(`--frame-delay ${args.values["frame-delay"]}: expected milliseconds >= 0`);

let script: ScriptLine[] = [];
if (args.values.script) {
  try {
    script = readScriptFile(args.values.script);
  } catch (error) {
    fail(error instanceof Error ? error.message : String(error));
  }
}

const simulateUsage = createUsageSimulator();
const logFile = args.values.log;
const quiet = args.values.quiet;

function describe(request: RecordedRequest): string {
  const input = Array.isArray(request.body.input) ? request.body.input.length : 1;
  return `#${request.index} ${request.method} ${request.path} stream=${request.stream} input=${input} items`;
}

function echo(body: Record<string, unknown>): string {
  const outputs = toolOutputsThisTurn(body);
  if (outputs.length === 0) return `echo: ${lastUserText(body)}`;
  const lines = outputs.map((o) => `- ${(o.output ?? "").replace(/\s+/g, " ").slice(0, 200)}`);
  return `Tool results:\n${lines.join("\n")}`;
}

let server: ReturnType<typeof startFakeResponsesServer>;
try {
  server = startFakeResponsesServer({
    port,
    onRequest(request) {
      if (!quiet) process.stderr.write(`fake-server: ${describe(request)}\n`);
      if (logFile) appendFileSync(logFile, `${JSON.stringify({ path: request.path, index: request.index, body: request.body })}\n`);
    },
    async responder(body, index) {
      const usage = await simulateUsage(body);
      const entry = script[index];
      const answer = entry ? scriptLineToResponse(entry, body, usage) : textStream(echo(body), { request: body, usage });
      return answer.kind === "stream" && frameDelayMs > 0 ? { ...answer, frameDelayMs } : answer;
    },
  });
} catch (error) {
  const code = typeof error === "object" && error !== null && "code" in error ? error.code : undefined;
  if (code === "EADDRINUSE" || /in use/i.test(String(error))) fail(`--port ${port}: in use; pick another port, or --port 0 for a free one`);
  fail(`cannot listen on 127.0.0.1:${port}: ${error instanceof Error ? error.message : String(error)}`);
}

process.stdout.write(`${server.baseURL}\n`);

async function stop(): Promise<void> {
  await server.close();
  process.exit(0);
}
process.on("SIGINT", () => void stop());
process.on("SIGTERM", () => void stop());
