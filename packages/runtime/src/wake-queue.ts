/**
 * Timer wakes handed out a few per event-loop turn.
 *
 * Node runs every timer that is due in one turn back to back, with only microtasks between them;
 * I/O waits for the last. A thousand running tasks whose progress ticks come due together (they
 * drift into step: a tick delayed by a busy turn is re-armed beside the others it waited with)
 * would then hold a cancel request, a health check or any other caller for the whole batch, tens
 * of milliseconds. Here a due wake is queued and released in slices from `setImmediate`, so the
 * loop polls for I/O between slices and no caller waits longer than one slice.
 */

/** Wakes released per turn: each resumes a task until its next wait (a progress event or so). */
const WAKES_PER_TURN = 8;
/** Released entries at the head of the queue dropped in one splice once this many piled up. */
const COMPACT_AFTER = 1024;

/** What the queue wakes: an object with the method, so a waiter needs no closure to be queued. */
export interface Wakeable {
  wake(): void;
}

/**
 * The queue: entries `head` to `count - 1` wait. Emptied, it keeps its room: a burst of a thousand
 * wakes every tick grew a new array through a dozen sizes each time (each lived until released).
 */
const due: (Wakeable | undefined)[] = [];
let head = 0;
let count = 0;
let scheduled = false;

/** Calls `sleeper.wake()` within a few turns, after the wakes queued before it, I/O polled in between. */
export function wakeSoon(sleeper: Wakeable): void {
  due[count++] = sleeper;
  if (!scheduled) {
    scheduled = true;
    setImmediate(releaseSlice);
  }
}

function releaseSlice(): void {
  const end = Math.min(count, head + WAKES_PER_TURN);
  try {
    while (head < end) {
      const sleeper = due[head];
      due[head++] = undefined;
      sleeper?.wake();
    }
  } finally {
    if (head === count) {
      head = 0;
      count = 0;
      scheduled = false;
    } else {
      if (head >= COMPACT_AFTER) {
        due.splice(0, head);
        count -= head;
        head = 0;
      }
      setImmediate(releaseSlice);
    }
  }
}
