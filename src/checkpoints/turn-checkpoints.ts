/**
 * The session's recorder of what each turn writes (ADR 0081), handed to the tool registry as its
 * `checkpoints`. Before a call writes, the files' current content is stored and the turn's
 * checkpoint names them (so a crash mid-write still leaves what undo needs); after it, what the
 * call left is recorded. A file written twice in a turn keeps its state before the first write
 * and after the last; a call that changed nothing leaves nothing. Calls arrive one at a time, but
 * the work is queued anyway so two can never interleave their checkpoint writes.
 */
import type { FileCheckpoints } from "../tools/types.ts";
import { describeError } from "../errors.ts";
import { trace } from "../trace.ts";
import { sameState, type Checkpoint, type FileState } from "./checkpoint-schema.ts";
import { emptyCheckpoint, readCurrentFile, type CheckpointStore } from "./checkpoint-store.ts";

export class TurnCheckpoints implements FileCheckpoints {
  private turn: number | undefined;
  private checkpoint: Checkpoint | undefined;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly store: CheckpointStore,
    private readonly root: string,
  ) {}

  /** Writes from now on belong to `turn`. */
  beginTurn(turn: number): void {
    this.turn = turn;
    this.checkpoint = undefined;
  }

  beforeWrite(paths: readonly string[]): Promise<void> {
    return this.serially(async () => {
      const checkpoint = await this.current();
      // Every snapshot is taken before the checkpoint changes: one that fails stops the write and leaves no trace.
      const added: Checkpoint["files"] = [];
      for (const rel of paths) {
        if (!checkpoint.files.some((file) => file.path === rel)) added.push({ path: rel, before: await this.snapshot(rel) });
      }
      // A file written before in this turn keeps its state before the turn; what it will hold is unknown until the call ends.
      for (const file of checkpoint.files) if (paths.includes(file.path)) delete file.after;
      checkpoint.files.push(...added);
      await this.store.write(checkpoint);
    });
  }

  afterWrite(paths: readonly string[]): Promise<void> {
    return this.serially(async () => {
      const checkpoint = await this.current();
      try {
        for (const rel of paths) {
          const entry = checkpoint.files.find((file) => file.path === rel);
          if (entry) entry.after = await this.snapshot(rel);
        }
        checkpoint.files = checkpoint.files.filter((file) => !sameState(file.before, file.after));
        await this.store.write(checkpoint);
      } catch (error) {
        // The write itself happened; the checkpoint keeps these files without an "after", which
        // undo treats as unknown (it asks for --force), so nothing is lost silently.
        trace(`checkpoint of turn ${checkpoint.turn}: what ${paths.join(", ")} hold after the write was not recorded: ${describeError(error)}`);
      }
    });
  }

  untracked(command: string): Promise<void> {
    return this.serially(async () => {
      const checkpoint = await this.current();
      checkpoint.commands.push(command);
      await this.store.write(checkpoint);
    });
  }

  private async current(): Promise<Checkpoint> {
    const turn = this.turn;
    if (turn === undefined) throw new Error("a write outside a turn: TurnCheckpoints.beginTurn was not called");
    // A turn resumed after a crash may already have a checkpoint: go on with it.
    this.checkpoint ??= (await this.store.read(turn)) ?? emptyCheckpoint(this.store.sessionId, turn);
    return this.checkpoint;
  }

  private async snapshot(rel: string): Promise<FileState> {
    const current = await readCurrentFile(this.root, rel);
    if (current.kind === "unusable") throw new Error(current.problem);
    if (current.kind === "file") await this.store.putBlob(current.bytes);
    return current.state;
  }

  private serially<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(work, work);
    this.queue = next.catch(() => undefined);
    return next;
  }
}
