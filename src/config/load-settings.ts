/**
 * Settings load order: defaults < user (~/.config/valarmind/config.json) < project
 * (.valarmind/config.json) < environment < flags. Each file is validated; an invalid one is a
 * usage error naming the file and field.
 */
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { Value } from "@sinclair/typebox/value";
import { UsageError } from "../errors.ts";
import { SettingsSchema, type PartialSettings, type Settings } from "./settings-schema.ts";

const PartialSchema = { ...SettingsSchema, required: [] as string[] };

export function userConfigPath(): string {
  const base = process.env.XDG_CONFIG_HOME || join(homedir(), ".config");
  return join(base, "valarmind", "config.json");
}

function readLayer(file: string): PartialSettings {
  if (!existsSync(file)) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new UsageError(`${file}: not valid JSON (${error instanceof Error ? error.message : String(error)})`, {
      hint: "Fix the file or delete it to use the defaults.",
    });
  }
  const errors = [...Value.Errors(PartialSchema, parsed)];
  const first = errors[0];
  if (first) {
    throw new UsageError(`${file}: ${first.path || "/"} ${first.message}`, {
      hint: "See docs/configuration.md for the settings and their types.",
    });
  }
  return parsed as PartialSettings;
}

function envInt(name: string): number | undefined {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n)) throw new UsageError(`environment variable ${name}=${raw} is not an integer`);
  return n;
}

function envLayer(): PartialSettings {
  const layer: Record<string, unknown> = {};
  if (process.env.VALARMIND_MODEL) layer.model = process.env.VALARMIND_MODEL;
  if (process.env.OPENAI_BASE_URL) layer.baseURL = process.env.OPENAI_BASE_URL;
  if (process.env.VALARMIND_REASONING_EFFORT) layer.reasoningEffort = process.env.VALARMIND_REASONING_EFFORT;
  if (process.env.VALARMIND_APPROVALS) layer.approvals = process.env.VALARMIND_APPROVALS;
  const max = envInt("MAX_CONTEXT_TOKENS");
  if (max !== undefined) layer.maxContextTokens = max;
  const turns = envInt("SHORT_BUFFER_TURNS");
  if (turns !== undefined) layer.shortBufferTurns = turns;
  return layer as PartialSettings;
}

export function loadSettings(root: string, flags: PartialSettings = {}): Settings {
  const merged = {
    ...Value.Default(SettingsSchema, {}) as Settings,
    ...readLayer(userConfigPath()),
    ...readLayer(join(root, ".valarmind", "config.json")),
    ...envLayer(),
    ...Object.fromEntries(Object.entries(flags).filter(([, v]) => v !== undefined)),
  };
  const first = [...Value.Errors(SettingsSchema, merged)][0];
  if (first) {
    throw new UsageError(`settings: ${first.path} ${first.message} (got ${JSON.stringify(first.value)})`, {
      hint: "Check the environment variables and flags; docs/configuration.md lists the settings.",
    });
  }
  if (merged.windowBlockTurns > merged.shortBufferTurns) {
    throw new UsageError(
      `settings: windowBlockTurns (${merged.windowBlockTurns}) must not exceed shortBufferTurns (${merged.shortBufferTurns}): a block is part of the window`,
      { hint: "Lower windowBlockTurns or raise shortBufferTurns (SHORT_BUFFER_TURNS) in .valarmind/config.json or ~/.config/valarmind/config.json." },
    );
  }
  return merged;
}
