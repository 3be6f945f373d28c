/**
 * The connections one partition's write uses at once: the target transaction, and beside it a
 * source session (the COPY source, or the source side of the validation rules read in the
 * write's own snapshot). Stop-now cancels the statement running on every one of them, and
 * each is released exactly once — a session still held when the write ends was interrupted
 * somewhere in the middle and is destroyed, never handed out again.
 */
import type { PgClient } from './connect.ts';
import { query } from './connect.ts';
import type { ClientPool } from './pool.ts';

export class PartitionSessions {
  private readonly held = new Map<PgClient, ClientPool>();
  private readonly tasks = new Set<Promise<unknown>>();
  private cancelled = false;
  private commitStarted = false;
  private readonly onAbort = (): void => void this.cancelAll();

  constructor(private readonly signal?: AbortSignal) {
    signal?.addEventListener('abort', this.onAbort, { once: true });
  }

  async open(pool: ClientPool): Promise<PgClient> {
    const client = await pool.acquire();
    this.held.set(client, pool);
    return client;
  }

  /** Back to its pool (or destroyed when `broken`), and no longer cancelled by stop-now. */
  release(client: PgClient, broken = false): void {
    const pool = this.held.get(client);
    if (!pool) return;
    this.held.delete(client);
    pool.release(client, broken);
  }

  /**
   * `work` on a session of `pool`, started now and not awaited here: the caller awaits the
   * result where it needs it, and settle() awaits it in any case. A failed task's session is
   * destroyed (its transaction's state is unknown).
   */
  beside<T>(pool: ClientPool, work: (client: PgClient) => Promise<T>): Promise<T> {
    return this.track(
      this.open(pool).then(async (client) => {
        try {
          // The write failed or was stopped while this session was still connecting.
          if (this.cancelled) throw new Error('cancelled before it started');
          const result = await work(client);
          this.release(client);
          return result;
        } catch (err) {
          this.release(client, true);
          throw err;
        }
      }),
    );
  }

  /** Awaited by settle(); its failure is the awaiting caller's to handle, never unhandled. */
  track<T>(task: Promise<T>): Promise<T> {
    this.tasks.add(task);
    void task.then(
      () => this.tasks.delete(task),
      () => this.tasks.delete(task),
    );
    return task;
  }

  /**
   * Cancels the statement in flight on every session still held but `except` (each from a
   * fresh connection of its pool), and any side work not yet started.
   */
  async cancelAll(except?: PgClient): Promise<void> {
    this.cancelled = true;
    await Promise.all(
      [...this.held]
        .filter(([client]) => client !== except)
        .map(async ([client, pool]) => {
          const pid = (client as unknown as { processID?: number }).processID;
          if (!pid) return;
          const canceller = await pool.acquire().catch(() => undefined);
          if (!canceller) return;
          if (this.commitStarted) {
            // The write began to commit while this canceller was connecting: a cancel now could
            // only cut short what was sent with the COMMIT.
            pool.release(canceller);
            return;
          }
          await query(canceller, 'SELECT pg_cancel_backend(:pid)', { pid }).then(
            () => pool.release(canceller),
            () => pool.release(canceller, true),
          );
        }),
    );
  }

  /** Waits for the side work to finish, then destroys any session that was never released. */
  async settle(): Promise<void> {
    this.signal?.removeEventListener('abort', this.onAbort);
    while (this.tasks.size > 0) await Promise.allSettled([...this.tasks]);
    for (const client of [...this.held.keys()]) this.release(client, true);
  }

  /** Stop-now no longer interrupts this write (it is committing), nor does a late cancel. */
  detachAbort(): void {
    this.commitStarted = true;
    this.signal?.removeEventListener('abort', this.onAbort);
  }

  /** The write began to commit (detachAbort): its outcome is no longer known from an error. */
  get committing(): boolean {
    return this.commitStarted;
  }
}
