/**
 * An event stream with a final result (pi-mono's `EventStream` shape): the producer pushes events
 * while it awaits tools and approvals and ends the stream with a result; a consumer pulls the
 * events with `for await` and reads the result with `result()`. Unbounded on purpose: a turn's
 * events are few and the producer must never block on a slow renderer (deltas are tiny).
 */
export class EventStream<T, R> implements AsyncIterable<T> {
  private readonly buffer: T[] = [];
  private waiting: ((result: IteratorResult<T>) => void) | undefined;
  private closed = false;
  private settle: { resolve: (result: R) => void; reject: (error: unknown) => void } | undefined;
  private readonly final: Promise<R>;

  constructor() {
    this.final = new Promise<R>((resolve, reject) => {
      this.settle = { resolve, reject };
    });
    // A producer that fails with nobody reading the result must not become an unhandled rejection.
    this.final.catch(() => undefined);
  }

  push(value: T): void {
    if (this.closed) return;
    const waiter = this.waiting;
    if (waiter) {
      this.waiting = undefined;
      waiter({ value, done: false });
    } else {
      this.buffer.push(value);
    }
  }

  /** Ends the stream: events already pushed are still delivered, then iteration stops. */
  end(result: R): void {
    this.close();
    this.settle?.resolve(result);
  }

  /** Ends the stream without a result (the producer itself failed); `result()` rejects. */
  fail(error: unknown): void {
    this.close();
    this.settle?.reject(error);
  }

  /** The producer's result, once it has ended the stream. */
  result(): Promise<R> {
    return this.final;
  }

  private close(): void {
    this.closed = true;
    const waiter = this.waiting;
    this.waiting = undefined;
    waiter?.({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: () => {
        if (this.buffer.length > 0) return Promise.resolve({ value: this.buffer.shift() as T, done: false });
        if (this.closed) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => {
          this.waiting = resolve;
        });
      },
    };
  }
}
