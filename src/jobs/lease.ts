/** A job given up by this process: whatever it made is dropped, never recorded over another's work. */
export class JobLost extends Error {}

export interface LeaseOptions {
  /** Extends the claim to `until` (ms); false when the claim is no longer this process's. */
  renew(until: number): Promise<boolean>;
  leaseMs: number;
  now: () => number;
  /** Called once, when the job is lost (to log why). */
  onLost(reason: string, error?: unknown): void;
  /** Called for a renewal that failed while the lease still holds (it is tried again). */
  onRenewalFailed(error: unknown): void;
}

/**
 * A job's claim, renewed every third of the lease while the job runs. The job is lost when a
 * renewal finds the claim gone (the lease had passed and another process took the job over, or the
 * URL was released), or when a renewal fails after the lease has passed (the database was out of
 * reach for a whole lease: another process may hold the job by now). A renewal that fails while the
 * lease holds is tried again at the next tick. Once lost, `check` throws JobLost (the worker calls it
 * before each step that writes) and `signal` stops a fetch under way.
 */
export class JobLease {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;
  private heldUntil: number;
  private renewing = false;
  /** The job ended: a renewal still under way (it may find the claim just cleared by the save) tells nothing. */
  private stopped = false;

  constructor(private readonly options: LeaseOptions, heldUntil: number) {
    this.heldUntil = heldUntil;
    this.timer = setInterval(() => void this.renew(), Math.max(100, options.leaseMs / 3));
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  check(): void {
    this.signal.throwIfAborted();
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }

  private async renew(): Promise<void> {
    if (this.renewing || this.stopped) return;
    this.renewing = true;
    const until = this.options.now() + this.options.leaseMs;
    try {
      const held = await this.options.renew(until);
      if (this.stopped) return;
      if (held) this.heldUntil = until;
      else this.lose('another process took it over, or its URL was released');
    } catch (error) {
      if (this.stopped) return;
      if (this.options.now() >= this.heldUntil) this.lose('its lease ran out while renewals failed', error);
      else this.options.onRenewalFailed(error);
    } finally {
      this.renewing = false;
    }
  }

  private lose(reason: string, error?: unknown): void {
    this.stop();
    this.options.onLost(reason, error);
    this.controller.abort(new JobLost(reason));
  }
}
