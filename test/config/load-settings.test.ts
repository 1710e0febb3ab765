/** Settings load order (defaults < user < project < env < flags) and the errors a user can meet. */
import { afterAll, afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadSettings, resolveSettings } from "../../src/config/load-settings.ts";
import { UsageError } from "../../src/errors.ts";
import { userConfigFileShown } from "../../src/config/user-config-dir.ts";
import { cleanupTempDirs, makeTempDir } from "../support/cli.ts";

const ENV_KEYS = ["XDG_CONFIG_HOME", "VALARMIND_MODEL", "OPENAI_BASE_URL", "MAX_CONTEXT_TOKENS", "SHORT_BUFFER_TURNS", "VALARMIND_APPROVALS", "VALARMIND_REASONING_EFFORT", "VALARMIND_WIRE_API"];
let saved: Record<string, string | undefined> = {};
let root = "";
let userDir = "";

beforeEach(async () => {
  saved = Object.fromEntries(ENV_KEYS.map((k) => [k, process.env[k]]));
  for (const k of ENV_KEYS) delete process.env[k];
  root = await makeTempDir();
  userDir = await makeTempDir();
  process.env.XDG_CONFIG_HOME = userDir;
});
afterEach(() => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});
afterAll(cleanupTempDirs);

function writeProject(value: unknown): string {
  mkdirSync(join(root, ".valarmind"), { recursive: true });
  const file = join(root, ".valarmind", "config.json");
  writeFileSync(file, typeof value === "string" ? value : JSON.stringify(value));
  return file;
}

function usageError(run: () => unknown): UsageError {
  try {
    run();
  } catch (error) {
    if (error instanceof UsageError) return error;
    throw error;
  }
  throw new Error("expected a UsageError");
}

describe("loadSettings", () => {
  test("later layers win: user < project (trusted folder) < environment < flags", () => {
    mkdirSync(join(userDir, "valarmind"), { recursive: true });
    writeFileSync(join(userDir, "valarmind", "config.json"), JSON.stringify({ model: "user-model", maxContextTokens: 9000, approvals: "auto-edit" }));
    writeProject({ model: "project-model", maxContextTokens: 12000 });
    process.env.MAX_CONTEXT_TOKENS = "15000";
    const settings = loadSettings(root, { approvals: "full-auto" }, { trusted: true });
    expect(settings.model).toBe("project-model");
    expect(settings.maxContextTokens).toBe(15000);
    expect(settings.approvals).toBe("full-auto");
    expect(settings.shortBufferTurns).toBe(20);
  });

  test("a broken config file names the file and is a usage error", () => {
    const file = writeProject("{ not json");
    const error = usageError(() => loadSettings(root));
    expect(error.message).toContain(file);
    expect(error.message).toContain("not valid JSON");
    expect(error.exitCode).toBe(2);
  });

  test("a wrong field names the file and the field", () => {
    const file = writeProject({ shortBufferTurns: 5 });
    const error = usageError(() => loadSettings(root));
    expect(error.message).toContain(file);
    expect(error.message).toContain("/shortBufferTurns");
  });

  test("a number too large for JSON (1e400 parses to Infinity) is shown as such, not as null", () => {
    mkdirSync(join(userDir, "valarmind"), { recursive: true });
    const file = join(userDir, "valarmind", "config.json");
    writeFileSync(file, '{"prices": {"input": 1e400, "output": 1}}');
    const error = usageError(() => loadSettings(root));
    expect(error.message).toContain(file);
    expect(error.message).toContain("/prices/input");
    expect(error.message).toContain("(got Infinity, a number too large to hold)");
  });

  test("baseURL must be an http(s) URL, in a file as in OPENAI_BASE_URL: the file, the field and an example", () => {
    mkdirSync(join(userDir, "valarmind"), { recursive: true });
    const file = join(userDir, "valarmind", "config.json");
    for (const bad of ["notaurl", "ftp://host/v1", "http://", "127.0.0.1:8787/v1"]) {
      writeFileSync(file, JSON.stringify({ baseURL: bad }));
      const error = usageError(() => loadSettings(root));
      expect(error.message).toBe(`${file}: /baseURL must be an http(s) URL such as http://127.0.0.1:8787/v1 (got ${JSON.stringify(bad)})`);
      expect(error.exitCode).toBe(2);
    }
    for (const good of ["http://127.0.0.1:8787/v1", "https://api.example.com/v1", "HTTPS://host"]) {
      writeFileSync(file, JSON.stringify({ baseURL: good }));
      expect(loadSettings(root).baseURL).toBe(good);
    }
  });

  test("hints name the user config file where it really is (XDG_CONFIG_HOME), with the home directory as ~", () => {
    writeProject({ windowBlockTurns: 30, shortBufferTurns: 20 });
    const error = usageError(() => loadSettings(root, {}, { trusted: true }));
    expect(error.hint).toContain(join(userDir, "valarmind", "config.json"));
    delete process.env.XDG_CONFIG_HOME;
    expect(userConfigFileShown()).toBe("~/.config/valarmind/config.json");
  });

  test("a non-integer environment variable is named", () => {
    process.env.SHORT_BUFFER_TURNS = "many";
    expect(usageError(() => loadSettings(root)).message).toContain("SHORT_BUFFER_TURNS=many");
  });

  test("wireApi: responses by default; the user file or VALARMIND_WIRE_API switch it; a bad value names the variable", () => {
    expect(loadSettings(root).wireApi).toBe("responses");
    mkdirSync(join(userDir, "valarmind"), { recursive: true });
    writeFileSync(join(userDir, "valarmind", "config.json"), JSON.stringify({ wireApi: "chat" }));
    expect(loadSettings(root).wireApi).toBe("chat");
    process.env.VALARMIND_WIRE_API = "responses";
    expect(loadSettings(root).wireApi).toBe("responses");
    process.env.VALARMIND_WIRE_API = "completions";
    const error = usageError(() => loadSettings(root));
    expect(error.message).toContain('VALARMIND_WIRE_API="completions" (setting wireApi): must be one of "responses", "chat"');
  });

  test("a project file's wireApi, like its baseURL, applies only in a trusted folder", () => {
    writeProject({ wireApi: "chat", baseURL: "http://127.0.0.1:8080/v1" });
    const untrusted = resolveSettings(root);
    expect(untrusted.settings.wireApi).toBe("responses");
    expect(untrusted.settings.baseURL).toBeUndefined();
    expect(untrusted.project?.ignored.map((c) => c.key).sort()).toEqual(["baseURL", "wireApi"]);
    const trusted = resolveSettings(root, {}, { trusted: true });
    expect(trusted.settings.wireApi).toBe("chat");
    expect(trusted.settings.baseURL).toBe("http://127.0.0.1:8080/v1");
  });

  test("a block larger than the window is refused with what to change", () => {
    writeProject({ windowBlockTurns: 30 });
    const error = usageError(() => loadSettings(root, {}, { trusted: true }));
    expect(error.message).toContain("windowBlockTurns (30) must not exceed shortBufferTurns (20)");
    expect(error.hint).toContain("shortBufferTurns");
  });
});
