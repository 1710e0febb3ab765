/**
 * Secrets the redactor found by their name in some text (`database_password=…` in a config file
 * the agent read) and so recognises when they come back bare: the model repeating the value, or
 * putting it in the working state. Kept for the life of the process only, and bounded.
 */
import type { NamedSecret } from "./redact-known-values.ts";

const MAX_LEARNED = 256;

export class LearnedSecrets {
  private readonly byValue = new Map<string, string>();
  private sorted: readonly NamedSecret[] | undefined = [];

  /** Remembers each value (the oldest is forgotten past the bound); true when any was new. */
  learn(found: ReadonlyArray<{ name: string; value: string }>): boolean {
    let added = false;
    for (const { name, value } of found) {
      if (this.byValue.has(value)) continue;
      this.byValue.set(value, name);
      added = true;
      if (this.byValue.size > MAX_LEARNED) {
        const oldest = this.byValue.keys().next().value;
        if (oldest !== undefined) this.byValue.delete(oldest);
      }
    }
    if (added) this.sorted = undefined;
    return added;
  }

  /** Longest first, like the environment's secrets. */
  list(): readonly NamedSecret[] {
    this.sorted ??= [...this.byValue].map(([value, name]) => ({ name, value })).sort((a, b) => b.value.length - a.value.length);
    return this.sorted;
  }

  forget(): void {
    this.byValue.clear();
    this.sorted = [];
  }
}
