// A node's webhook send places, shared fairly between projects: at most `total` sends at once, at most
// `perProject` of them for one project, and a freed place goes to the waiting project that holds the
// fewest, the next in turn among equals (round robin), not to whichever asked first. One project's hanging receivers thus hold at most
// `perProject` places, however many webhooks and deliveries it has, and another project's delivery
// waits for at most one place to come free, never behind that project's queue.
//
//   queues (Map order = turn order):  prj_a: [w, w, w]  ->  prj_b: [w]  ->  prj_c: [w, w]
//   a place freed: of the projects that may take one (under perProject), the one holding the fewest
//   (the first in turn among equals) gets it for its oldest waiter, and goes to the back of the turn.
export class SendPlaces {
  private running = 0;
  private readonly held = new Map<string, number>();
  private readonly queues = new Map<string, (() => void)[]>();

  constructor(
    private readonly total: number,
    private readonly perProject: number,
  ) {}

  /** Runs `fn` in one of the places, once `projectId` may have one. */
  async run<T>(projectId: string, fn: () => Promise<T>): Promise<T> {
    // A project's waiters keep their order: a new send never passes one of its own that waits.
    if (this.mayTake(projectId) && !this.queues.has(projectId)) this.take(projectId);
    else
      await new Promise<void>((granted) => {
        const queue = this.queues.get(projectId);
        if (queue === undefined) this.queues.set(projectId, [granted]);
        else queue.push(granted);
      });
    try {
      return await fn();
    } finally {
      this.release(projectId);
    }
  }

  /** Sends running now for `projectId` (all projects' without one). */
  inUse(projectId?: string): number {
    return projectId === undefined ? this.running : (this.held.get(projectId) ?? 0);
  }

  private mayTake(projectId: string): boolean {
    return this.running < this.total && (this.held.get(projectId) ?? 0) < this.perProject;
  }

  private take(projectId: string): void {
    this.running++;
    this.held.set(projectId, (this.held.get(projectId) ?? 0) + 1);
  }

  private release(projectId: string): void {
    this.running--;
    const left = this.held.get(projectId)! - 1;
    if (left === 0) this.held.delete(projectId);
    else this.held.set(projectId, left);
    // The place is handed over here (taken before the waiter runs), so no new sender slips in between:
    // to the waiting project that holds the fewest places, the first in turn among equals.
    let next: string | null = null;
    for (const waiting of this.queues.keys()) {
      if (this.mayTake(waiting) && (next === null || (this.held.get(waiting) ?? 0) < (this.held.get(next) ?? 0))) next = waiting;
    }
    if (next === null) return;
    const queue = this.queues.get(next)!;
    const granted = queue.shift()!;
    this.queues.delete(next);
    if (queue.length > 0) this.queues.set(next, queue);
    this.take(next);
    granted();
  }
}
