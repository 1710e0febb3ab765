/**
 * A turn's checkpoint (ADR 0081): `.valarmind/checkpoints/<session>/<turn>/checkpoint.json` names
 * every file the turn's file tools wrote, with its state before the turn's first write and after
 * its last, and the shell commands that could write files no checkpoint sees. File contents are
 * blobs named by their SHA-256 in `.valarmind/checkpoints/<session>/blobs/`.
 */
import { Type, type Static } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";

/** Bump with a reader-side migration whenever the shape changes. */
export const CHECKPOINT_VERSION = 1;

export const FileStateSchema = Type.Union([
  Type.Object({ exists: Type.Literal(false) }, { additionalProperties: false }),
  Type.Object(
    {
      exists: Type.Literal(true),
      sha256: Type.String({ pattern: "^[0-9a-f]{64}$" }),
      size: Type.Integer({ minimum: 0 }),
      /** Permission bits, given back to a file undo recreates. */
      mode: Type.Integer({ minimum: 0, maximum: 0o7777 }),
    },
    { additionalProperties: false },
  ),
]);

export const CheckpointFileSchema = Type.Object(
  {
    /** Workspace-relative, symlink-free (as the confinement resolved it). */
    path: Type.String({ minLength: 1 }),
    before: FileStateSchema,
    /** Absent while a write is under way, or when valarmind stopped before recording what it left. */
    after: Type.Optional(FileStateSchema),
  },
  { additionalProperties: false },
);

export const CheckpointSchema = Type.Object(
  {
    version: Type.Literal(CHECKPOINT_VERSION),
    session: Type.String({ minLength: 1 }),
    turn: Type.Integer({ minimum: 1 }),
    files: Type.Array(CheckpointFileSchema),
    /** Shell commands run with write access during the turn: their effects are not undone. */
    commands: Type.Array(Type.String()),
  },
  { additionalProperties: false },
);

export type FileState = Static<typeof FileStateSchema>;
export type CheckpointFile = Static<typeof CheckpointFileSchema>;
export type Checkpoint = Static<typeof CheckpointSchema>;

export const checkCheckpoint = TypeCompiler.Compile(CheckpointSchema);

export function sameState(a: FileState | undefined, b: FileState | undefined): boolean {
  if (a === undefined || b === undefined) return false;
  if (!a.exists || !b.exists) return a.exists === b.exists;
  return a.sha256 === b.sha256;
}
