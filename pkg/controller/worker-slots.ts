// How many workers may run at once (`--max-workers`). Each worker holds an engine, which costs
// about 150 MB while warm, so a machine runs only as many as its memory holds. A worker wanted
// beyond the limit waits in line, first come first served; a slot frees when a worker stops.
// The agent controller decides what to stop to make room (the longest-idle worker); this class
// only counts, and says who may go next.

export class WorkerSlots {
  /** Agents (refKey) whose worker holds a slot: started and not stopped since. */
  private readonly holders = new Set<string>();
  /** Agents waiting for a slot, in arrival order (a Set keeps insertion order). */
  private readonly line = new Set<string>();

  /** At most this many workers at once; 0 or less means no limit. */
  constructor(readonly limit: number) {}

  get used(): number {
    return this.holders.size;
  }

  get waiting(): number {
    return this.line.size;
  }

  holds(key: string): boolean {
    return this.holders.has(key);
  }

  /** Agents holding a slot. */
  held(): string[] {
    return [...this.holders];
  }

  /**
   * Takes a slot for the agent's worker. False when every slot is held or promised to an agent
   * ahead in line: the agent joins the line (or keeps its place) and waits.
   */
  take(key: string): boolean {
    if (this.limit <= 0 || this.holders.has(key)) {
      this.holders.add(key);
      return true;
    }
    let ahead = 0;
    for (const k of this.line) {
      if (k === key) break;
      ahead++;
    }
    if (this.holders.size + ahead < this.limit) {
      this.line.delete(key);
      this.holders.add(key);
      return true;
    }
    this.line.add(key);
    return false;
  }

  /** The agent has a worker already (found running): it holds a slot, whatever the limit. */
  hold(key: string): void {
    this.line.delete(key);
    this.holders.add(key);
  }

  /**
   * The agent's worker stopped, or the agent no longer wants one: its slot (or place in line) is
   * given up. Returns the agents in line that may now take a slot.
   */
  free(key: string): string[] {
    this.holders.delete(key);
    this.line.delete(key);
    const room = this.limit - this.holders.size;
    return room > 0 ? [...this.line].slice(0, room) : [];
  }
}
