/**
 * Many readers or one writer, in arrival order: a query of the log index reads one view of it from
 * start to end, and an update waits for the queries running (new queries wait behind it).
 */
export class ReadWriteLock {
  private readers = 0;
  private writing = false;
  private readonly waiting: { write: boolean; go: () => void }[] = [];

  async read<T>(work: () => Promise<T>): Promise<T> {
    await this.acquire(false);
    try {
      return await work();
    } finally {
      this.readers--;
      this.wake();
    }
  }

  async write<T>(work: () => Promise<T>): Promise<T> {
    await this.acquire(true);
    try {
      return await work();
    } finally {
      this.writing = false;
      this.wake();
    }
  }

  private acquire(write: boolean): Promise<void> {
    if (this.waiting.length === 0 && this.free(write)) {
      this.take(write);
      return Promise.resolve();
    }
    return new Promise((go) => this.waiting.push({ write, go }));
  }

  private free(write: boolean): boolean {
    return !this.writing && (!write || this.readers === 0);
  }

  private take(write: boolean): void {
    if (write) this.writing = true;
    else this.readers++;
  }

  private wake(): void {
    while (this.waiting.length > 0 && this.free(this.waiting[0]!.write)) {
      const next = this.waiting.shift()!;
      this.take(next.write);
      next.go();
    }
  }
}
