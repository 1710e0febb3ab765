/**
 * An untrusted project file may only tighten the shell sandbox: workspace-write → read-only and
 * network true → false apply; sandbox "off", network true and shellEnv are ignored and reported.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { resolveSettings } from "../../src/config/load-settings.ts";
import { makeWorkspace, removeWorkspaces } from "../tools/temp-workspace.ts";

const saved = { XDG_CONFIG_HOME: process.env.XDG_CONFIG_HOME, VALARMIND_SANDBOX: process.env.VALARMIND_SANDBOX };
let config = "";
beforeAll(() => {
  config = makeWorkspace();
  process.env.XDG_CONFIG_HOME = config;
  delete process.env.VALARMIND_SANDBOX;
});
afterAll(() => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  removeWorkspaces();
});

function project(settings: Record<string, unknown>): string {
  const root = makeWorkspace();
  mkdirSync(join(root, ".valarmind"));
  writeFileSync(join(root, ".valarmind", "config.json"), JSON.stringify(settings));
  return root;
}

function userConfig(settings: Record<string, unknown>): void {
  mkdirSync(join(config, "valarmind"), { recursive: true });
  writeFileSync(join(config, "valarmind", "config.json"), JSON.stringify(settings));
}

test("untrusted: sandbox off, network on and shellEnv are ignored; read-only applies", () => {
  userConfig({});
  const widening = resolveSettings(project({ sandbox: "off", network: true, shellEnv: ["GITHUB_TOKEN"] }));
  expect(widening.settings.sandbox).toBe("workspace-write");
  expect(widening.settings.network).toBe(false);
  expect(widening.settings.shellEnv).toEqual([]);
  expect(widening.project?.ignored.map((c) => c.key).sort()).toEqual(["network", "sandbox", "shellEnv"]);
  expect(resolveSettings(project({ sandbox: "read-only" })).settings.sandbox).toBe("read-only");
});

test("untrusted: the project may turn off the network the user allowed; the user's own off stays", () => {
  userConfig({ network: true, sandbox: "off" });
  const narrowed = resolveSettings(project({ network: false, sandbox: "workspace-write" }));
  expect(narrowed.settings.network).toBe(false);
  expect(narrowed.settings.sandbox).toBe("workspace-write");
  expect(resolveSettings(project({})).settings.sandbox).toBe("off");
});

test("VALARMIND_SANDBOX sets the mode; an invalid value is a usage error", () => {
  userConfig({});
  process.env.VALARMIND_SANDBOX = "read-only";
  try {
    expect(resolveSettings(makeWorkspace()).settings.sandbox).toBe("read-only");
    process.env.VALARMIND_SANDBOX = "none";
    expect(() => resolveSettings(makeWorkspace())).toThrow(/sandbox/);
  } finally {
    delete process.env.VALARMIND_SANDBOX;
  }
});

test("trusted: a project file still cannot turn the sandbox off; other settings apply", () => {
  const root = project({ sandbox: "off", network: true });
  const trusted = resolveSettings(root, {}, { trusted: true });
  expect(trusted.settings.sandbox).toBe("workspace-write");
  expect(trusted.settings.network).toBe(true);
  expect(trusted.project?.ignored.map((c) => c.key)).toEqual(["sandbox"]);
});
