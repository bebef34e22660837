/** A set bounded to its `limit` most recent keys: duplicate suppression that cannot grow without end. */
export class RecentKeys {
  private readonly keys = new Map<string, true>();
  constructor(private readonly limit: number) {}

  has(key: string): boolean {
    return this.keys.has(key);
  }

  /** Adds `key`; false when it was already there. */
  add(key: string): boolean {
    if (this.keys.has(key)) return false;
    this.keys.set(key, true);
    if (this.keys.size > this.limit) this.keys.delete(this.keys.keys().next().value as string);
    return true;
  }
}
