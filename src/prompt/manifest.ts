/**
 * Manifest files: `.valarmind/sessions/<session-id>/manifests/<turn>-<step>.json` (summary
 * requests add `-summary`). Validated against manifest-schema.ts on every write
 * and read; written atomically; never overwritten (a rebuilt step gets `-2`, `-3`, ...). Item ids
 * and details can quote file names and text, so every string is redacted before it is written.
 *
 *   const path = await writeManifest(session.dir, built.manifest);
 *   ... after the call:
 *   await recordUsage(path, usage);                  // input, cached, output, reasoning
 */
import { nonRegularFile } from "../config/non-regular-file.ts";
import { existsSync } from "node:fs";
import { lstat, readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import type { ErrorObject } from "ajv";
import { makePrivateDirs, refuseLinksBelowValarmind } from "../config/valarmind-dir.ts";
import { describeError, ValarmindError } from "../errors.ts";
import type { Usage } from "../model/types.ts";
import { redactSecretsInJson } from "../secrets/redact-secrets.ts";
import { writeFileAtomic } from "../state/atomic-write.ts";
// ajv (draft 2020-12 + formats), compiled ahead of time from manifest-schema.ts (manifest-validator-build.ts).
import validate from "./generated/manifest-validator.js";
import { MANIFEST_VERSION, type Manifest } from "./manifest-schema.ts";

export { manifestJsonSchema } from "./manifest-json-schema.ts";

function describe(errors: ErrorObject[] | null | undefined): string {
  const first = errors?.[0];
  if (!first) return "does not match the manifest schema";
  return `${first.instancePath || "/"} ${first.message ?? first.keyword}`;
}

/** A manifest a newer valarmind wrote: fine, only not readable by this one. */
export class NewerManifestError extends ValarmindError {}

export async function validateManifest(value: unknown, where: string): Promise<Manifest> {
  const version = typeof value === "object" && value !== null && "manifest_version" in value ? value.manifest_version : undefined;
  if (typeof version === "number" && version > MANIFEST_VERSION) {
    // Not damaged: a newer valarmind wrote it (a shared or synced folder). Nothing to delete.
    throw new NewerManifestError(`${where}: written by a newer valarmind (manifest_version ${version}; this one reads ${MANIFEST_VERSION})`, {
      hint: "Update valarmind to read it; the file is fine and is left as it is.",
    });
  }
  if (!validate(value)) {
    throw new ValarmindError(`${where}: invalid manifest: ${describe(validate.errors)}`, {
      hint: "Manifests are written by valarmind; if this file was edited, restore it or delete it.",
    });
  }
  return value as Manifest;
}

export function manifestsDir(sessionDir: string): string {
  return join(sessionDir, "manifests");
}

export function manifestBaseName(manifest: Pick<Manifest, "turn" | "step" | "purpose">): string {
  const base = `${String(manifest.turn).padStart(4, "0")}-${String(manifest.step).padStart(2, "0")}`;
  return manifest.purpose === "turn" ? base : `${base}-${manifest.purpose}`;
}

/** Redacts, validates and writes the manifest; returns its path. */
export async function writeManifest(sessionDir: string, manifest: Manifest): Promise<string> {
  const dir = manifestsDir(sessionDir);
  const base = manifestBaseName(manifest);
  const redacted = redactSecretsInJson(manifest);
  await validateManifest(redacted, `${dir}/${base}.json`);
  makePrivateDirs(dir);
  let path = join(dir, `${base}.json`);
  for (let n = 2; existsSync(path); n++) path = join(dir, `${base}-${n}.json`);
  await writeFileAtomic(path, `${JSON.stringify(redacted, null, 2)}\n`);
  return path;
}

/** Manifests valarmind writes are tens of KB; anything far larger is not one of them. */
const MAX_MANIFEST_BYTES = 16 * 1024 * 1024;

export async function readManifest(path: string): Promise<Manifest> {
  // A clone can ship anything under .valarmind/: a FIFO would block the read forever, a symlink
  // would show another file as this session's (and its contents in the error).
  const info = await lstat(path).catch(() => undefined);
  const special = info && nonRegularFile(info);
  if (info && special !== undefined) {
    throw new ValarmindError(`${path}: not a manifest (${special}); not read`, {
      hint: "valarmind writes manifests as plain files; remove this one (a cloned repository may have shipped it).",
    });
  }
  if (info && info.size > MAX_MANIFEST_BYTES) {
    throw new ValarmindError(`${path}: ${info.size} bytes, far larger than a manifest; not read`, { hint: "Delete it; a manifest only describes a past call." });
  }
  let value: unknown;
  try {
    value = JSON.parse(await readFile(path, "utf8"));
  } catch (error) {
    if (error instanceof SyntaxError) {
      // The parser quotes what it found: not echoed (the file may be anything).
      throw new ValarmindError(`${path}: cannot read the manifest (not valid JSON)`, {
        hint: "Manifests are written by valarmind; delete a damaged one, it only describes a past call.",
      });
    }
    throw new ValarmindError(`${path}: cannot read the manifest (${describeError(error)})`, {
      hint: "Manifests are written by valarmind; delete a damaged one, it only describes a past call.",
    });
  }
  return validateManifest(value, path);
}

async function update(path: string, change: (m: Manifest) => Manifest): Promise<Manifest> {
  const next = redactSecretsInJson(change(await readManifest(path)));
  await validateManifest(next, path);
  await writeFileAtomic(path, `${JSON.stringify(next, null, 2)}\n`);
  return next;
}

/** Adds the API's usage for the call after it completed. */
export function recordUsage(path: string, usage: Usage): Promise<Manifest> {
  return update(path, (m) => ({ ...m, usage: { input: usage.input, cached: usage.cached, output: usage.output, reasoning: usage.reasoning } }));
}

/** Adds the API's own count of the request's input tokens (`--tokens api`). */
export function recordApiCount(path: string, tokens: number): Promise<Manifest> {
  return update(path, (m) => ({ ...m, api_input_tokens: tokens }));
}

/** Manifest files of a session, in call order. */
export async function listManifestFiles(sessionDir: string): Promise<string[]> {
  const dir = manifestsDir(sessionDir);
  // Another folder's manifests, through a link, are not this session's.
  refuseLinksBelowValarmind(dir);
  if (!existsSync(dir)) return [];
  const keyed = (await readdir(dir)).flatMap((name) => {
    const m = /^(\d{4})-(\d{2})(?:-(.+))?\.json$/.exec(name);
    return m ? [{ name, turn: Number(m[1]), step: Number(m[2]), rest: m[3] ?? "" }] : [];
  });
  keyed.sort((a, b) => a.turn - b.turn || a.step - b.step || a.rest.localeCompare(b.rest, "en", { numeric: true }));
  return keyed.map((k) => join(dir, k.name));
}

/** A manifest file as listed: its manifest, or what is wrong with it (one bad file never hides the others). */
export type ManifestEntry = { path: string; manifest: Manifest } | { path: string; problem: string; newer?: true };

export async function readManifestEntries(sessionDir: string): Promise<ManifestEntry[]> {
  const files = await listManifestFiles(sessionDir);
  return Promise.all(
    files.map(async (path): Promise<ManifestEntry> => {
      try {
        return { path, manifest: await readManifest(path) };
      } catch (error) {
        if (!(error instanceof ValarmindError)) throw error;
        return { path, problem: error.message, ...(error instanceof NewerManifestError && { newer: true as const }) };
      }
    }),
  );
}

/** The readable manifests of a session, in call order; damaged ones are left out (see readManifestEntries). */
export async function readManifests(sessionDir: string): Promise<Array<{ path: string; manifest: Manifest }>> {
  return (await readManifestEntries(sessionDir)).flatMap((entry) => ("manifest" in entry ? [entry] : []));
}
