/**
 * The single executable (`bun run build`, scripts/build.ts): built once here (~2–10 s), copied
 * alone into an empty directory and run with a fresh HOME and no Bun on PATH, it answers
 * `--version`, runs `chat -p` against a Responses server with the prompt texts, tool descriptions
 * and o200k ranks it carries, writes the VALARMIND.md template, and loads no `.env` or
 * `bunfig.toml` from the directory it runs in.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, existsSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { version as gptTokenizerVersion } from "gpt-tokenizer/package.json" with { type: "json" };
import { buildBinary } from "../../scripts/build.ts";
import { promptText } from "../../src/prompt/prompt-text.ts";
import { toolText } from "../../src/tools/descriptions.ts";
import { cleanupTempDirs, makeTempDir } from "../support/cli.ts";
import { lastUserText, startFakeResponsesServer, textStream, toolCallStream, toolNames } from "../support/fake-responses-server.ts";

const ROOT = resolve(import.meta.dir, "../..");
let built: string;
afterAll(cleanupTempDirs);

beforeAll(async () => {
  built = (await buildBinary(join(await makeTempDir("valarmind-build-"), "valarmind"))).path;
}, 180_000);

/** The binary copied alone into an empty directory, a fresh HOME, and a PATH without bun (git only). */
async function freshCopy() {
  const dir = await makeTempDir("valarmind-binary-");
  const binary = join(dir, "valarmind");
  copyFileSync(built, binary);
  const home = await makeTempDir("valarmind-home-");
  const path = await makeTempDir("valarmind-path-");
  const git = Bun.which("git");
  if (git) symlinkSync(git, join(path, "git"));
  const env = { PATH: path, HOME: home, XDG_CONFIG_HOME: join(home, ".config"), NO_COLOR: "1" };
  const run = async (args: string[], extra: Record<string, string> = {}) => {
    const proc = Bun.spawn([binary, ...args], { cwd: dir, env: { ...env, ...extra }, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    return { code, stdout, stderr };
  };
  return { dir, home, run };
}

describe("dist/valarmind, the single executable", () => {
  test("alone in an empty directory with a fresh HOME: --version, and chat -p with its embedded texts and token counts", async () => {
    const { dir, home, run } = await freshCopy();
    expect(readdirSync(dir)).toEqual(["valarmind"]);
    expect(await run(["--version"])).toEqual({ code: 0, stdout: `${pkg.version}\n`, stderr: "" });

    await using server = startFakeResponsesServer();
    writeFileSync(join(dir, "notes.txt"), "the port is 4173\n");
    server.enqueue(toolCallStream([{ name: "read_file", arguments: { path: "notes.txt" } }]), textStream("Port 4173."));
    const chat = await run(["chat", "-p", "which port?", "--yes"], { OPENAI_BASE_URL: server.baseURL });
    expect(chat).toMatchObject({ code: 0, stdout: "Port 4173.\n" });

    const first = server.requests[0];
    if (!first) throw new Error("the binary sent no request");
    expect(lastUserText(first.body)).toBe("which port?");
    expect(toolNames(first.body)).toContain("read_file");
    // Prompt text and tool descriptions came from inside the binary (there is no src/ beside it).
    expect(first.raw).toContain(JSON.stringify(promptText("core-rules")).slice(1, -1));
    expect(first.raw).toContain(JSON.stringify(toolText("read_file")).slice(1, -1));
    expect(server.requests[1]?.raw).toContain("the port is 4173");
    // The o200k ranks were read from the binary and cached in the fresh HOME.
    const cached = readdirSync(join(home, ".cache/valarmind"));
    expect(cached.some((name) => name.startsWith(`o200k_base.gpt-tokenizer-${gptTokenizerVersion}-`))).toBe(true);
  }, 60_000);

  test("init writes the VALARMIND.md template it carries", async () => {
    const { dir, run } = await freshCopy();
    const r = await run(["init"]);
    expect(r.code).toBe(0);
    expect(readFileSync(join(dir, "VALARMIND.md"), "utf8")).toBe(readFileSync(join(ROOT, "src/state/templates/VALARMIND.md"), "utf8"));
  }, 60_000);

  test("a repository's .env and bunfig.toml are not loaded", async () => {
    const { dir, run } = await freshCopy();
    await using server = startFakeResponsesServer();
    server.enqueue(textStream("from the .env server"));
    // Were .env loaded, the chat would reach this server with this key; were bunfig.toml, the preload would run.
    writeFileSync(join(dir, ".env"), `OPENAI_BASE_URL=${server.baseURL}\nOPENAI_API_KEY=sk-from-dotenv\n`);
    const marker = join(dir, "preload-ran");
    writeFileSync(join(dir, "bunfig.toml"), 'preload = ["./preload.ts"]\n');
    writeFileSync(join(dir, "preload.ts"), `require("node:fs").writeFileSync(${JSON.stringify(marker)}, "ran");\n`);
    const r = await run(["chat", "-p", "hello"]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("OPENAI_API_KEY is not set");
    expect(server.requests).toHaveLength(0);
    expect(existsSync(marker)).toBe(false);
  }, 60_000);
});
