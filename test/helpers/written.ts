// Waiting for a node's background work (the log's appender, a witness round, a count written
// behind) by what it writes, never by a sleep and a deadline: the check runs now and again
// after every write the store announces in the space (Store.watch, which LevelDB and
// PostgreSQL both serve), so it holds as soon as the write lands, however busy the machine
// (issue 31, item 6; ARCHITECTURE 5). A check that never holds fails the test at its timeout.
import { LogOutbox } from '../../src/domain/log/index.js';
import type { Space, Store } from '../../src/store/index.js';

/** Resolves once check() holds; it is run now and after each announced write in `space`. */
export function untilWritten(store: Store, space: Space<unknown>, check: () => boolean | Promise<boolean>): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let running = false;
    let again = false;
    let settled = false;
    const run = async () => {
      if (settled) return;
      if (running) {
        again = true; // checked again once the running check ends: no write is missed
        return;
      }
      running = true;
      try {
        do {
          again = false;
          if (await check()) {
            settled = true;
            stop();
            resolve();
            return;
          }
        } while (again);
      } catch (e) {
        settled = true;
        stop();
        reject(e as Error);
      } finally {
        running = false;
      }
    };
    const stop = store.watch(
      space,
      () => void run(),
      () => void run(),
    );
    void run();
  });
}

/**
 * Resolves once the node's log has appended everything its outbox held: decisions and other
 * events are appended by the log's own appender after the request that made them answered.
 */
export function untilLogSettled(node: { store: Store }): Promise<void> {
  return untilWritten(node.store, LogOutbox, async () => (await node.store.list(LogOutbox, { limit: 1 })).length === 0);
}

/**
 * For state nothing announces (files on disk, rows of the blob tables, another process):
 * checks again every `everyMs` until check() holds. No deadline of its own: the test's timeout
 * is the only bound, so a busy machine makes the wait longer, never the test fail.
 */
export async function eventually(check: () => boolean | Promise<boolean>, everyMs = 10): Promise<void> {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, everyMs));
}
