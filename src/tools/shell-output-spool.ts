/**
 * A shell command's full output on disk (seed 002: the raw result is kept on disk, the model sees
 * a summary): `<session>/outputs/<call-id>.log`, stdout and stderr in the order they arrived, 0600
 * in a 0700 directory. It is capped (64 MiB by default; beyond that bytes are only counted) and
 * written only once the output outgrows `keepAboveBytes`: smaller outputs are whole in the tool
 * result and the transcript. Not redacted: secret redaction works on whole strings, this is a
 * stream; the file is private like the transcript (docs/tools.md). Writing never throws: a
 * failure is reported with the output.
 */
import { closeSync, constants, openSync, realpathSync, writeSync } from "node:fs";
import { join } from "node:path";
import { describeError, errnoCode } from "../errors.ts";
import { makePrivateDirs, PRIVATE_FILE_MODE } from "../config/valarmind-dir.ts";

export interface SpoolLimits {
  /** Bytes kept on disk; the rest is counted. */
  maxBytes: number;
  /** Output up to this size is not written at all. */
  keepAboveBytes: number;
}

export const SPOOL_LIMITS: SpoolLimits = { maxBytes: 64 * 1024 * 1024, keepAboveBytes: 2048 };

/** What the spool did, for the tool's result. */
export type SpoolReport =
  | { kind: "none" }
  | { kind: "kept"; path: string; keptBytes: number; totalBytes: number }
  | { kind: "failed"; path: string; reason: string; totalBytes: number };

/** A model's call id made safe as a file name (it is the model's text, not ours). */
export function spoolFileName(callId: string, attempt: number): string {
  const safe = callId.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 80) || "call";
  return attempt === 0 ? `${safe}.log` : `${safe}-${attempt}.log`;
}

export class ShellOutputSpool {
  private fd: number | undefined;
  private path: string | undefined;
  private pending: Uint8Array[] = [];
  private pendingBytes = 0;
  private written = 0;
  private total = 0;
  private failure: string | undefined;

  constructor(
    private readonly dir: string,
    private readonly callId: string,
    private readonly limits: SpoolLimits = SPOOL_LIMITS,
  ) {}

  /** Takes the first `length` bytes of `chunk` (all by default); keeps no reference to it. */
  write(chunk: Uint8Array, length: number = chunk.length): void {
    this.total += length;
    if (this.failure !== undefined || this.written >= this.limits.maxBytes) return;
    if (this.fd === undefined) {
      if (this.pendingBytes + length <= this.limits.keepAboveBytes) {
        // A copy: the caller reuses its buffer (and Buffer#slice would be a view).
        this.pending.push(new Uint8Array(chunk.subarray(0, length)));
        this.pendingBytes += length;
        return;
      }
      if (!this.open()) return;
      const held = Buffer.concat(this.pending);
      this.pending = [];
      this.put(held, held.length);
    }
    this.put(chunk, length);
  }

  private open(): boolean {
    try {
      makePrivateDirs(this.dir);
      // The real path, so the name shown is workspace-relative even under a symlinked root.
      const dir = realpathSync(this.dir);
      // O_EXCL + O_NOFOLLOW: never an existing file, never through a symlink someone planted.
      const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
      for (let attempt = 0; ; attempt++) {
        const path = join(dir, spoolFileName(this.callId, attempt));
        try {
          this.fd = openSync(path, flags, PRIVATE_FILE_MODE);
          this.path = path;
          return true;
        } catch (error) {
          const code = errnoCode(error);
          if (code !== "EEXIST" || attempt >= 20) throw error;
        }
      }
    } catch (error) {
      this.path = join(this.dir, spoolFileName(this.callId, 0));
      this.failure = describeError(error);
      this.pending = [];
      return false;
    }
  }

  private put(bytes: Uint8Array, length: number): void {
    if (this.fd === undefined) return;
    const take = Math.min(length, this.limits.maxBytes - this.written);
    try {
      let done = 0;
      while (done < take) done += writeSync(this.fd, bytes, done, take - done);
      this.written += take;
    } catch (error) {
      this.failure = describeError(error);
    }
  }

  /** Closes the file; call once, after the command's streams ended. */
  finish(): SpoolReport {
    if (this.fd !== undefined) {
      try {
        closeSync(this.fd);
      } catch (error) {
        this.failure ??= describeError(error);
      }
      this.fd = undefined;
    }
    this.pending = [];
    if (this.path === undefined) return { kind: "none" };
    if (this.failure !== undefined) return { kind: "failed", path: this.path, reason: this.failure, totalBytes: this.total };
    return { kind: "kept", path: this.path, keptBytes: this.written, totalBytes: this.total };
  }
}
