/**
 * What a provider's list shows of its order, read one item after another by the time each was made: newest
 * first once a time has fallen and none has risen. Items made in one second show nothing, and a list
 * whose times both rise and fall runs in no order of time.
 */
export class ListOrder {
  private last: number | undefined;
  private falls = false;
  private rises = false;

  /** Takes the next item's `created_at` (anything but a number is passed over). */
  see(createdAt: unknown): void {
    if (typeof createdAt !== 'number') return;
    if (this.last !== undefined && createdAt < this.last) this.falls = true;
    if (this.last !== undefined && createdAt > this.last) this.rises = true;
    this.last = createdAt;
  }

  get newestFirst(): boolean {
    return this.falls && !this.rises;
  }
}
