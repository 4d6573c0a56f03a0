/**
 * The names in a folder that changed since a reader last asked, from the kernel where it tells
 * them exactly: Linux's inotify, which queues an event in the same system call as the write,
 * create, rename or delete it reports. Elsewhere (FSEvents delivers late and coalesced), and
 * whenever an event may have been lost, the answer is null: check every file.
 *
 * An event queued before a call began has been delivered once the event loop has gone round once
 * ({@link settled}): the kernel queued it before the call's own request became readable, so both
 * come out of the same poll. Events are lost only when the kernel's queue overflows, which takes
 * `max_queued_events` events unread, all of which are then delivered: fewer than that since the
 * last answer means none was lost.
 */

import * as fs from 'node:fs';

/** Resolves after one turn of the event loop: every event already queued has been delivered. */
export function settled(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

const QUEUE_LIMIT_FILE = '/proc/sys/fs/inotify/max_queued_events';

/** The kernel's queue length, or null when it cannot be known (no inotify to trust then). */
function queueLimit(): number | null {
  if (process.platform !== 'linux') return null;
  try {
    const limit = Number.parseInt(fs.readFileSync(QUEUE_LIMIT_FILE, 'utf8'), 10);
    return Number.isSafeInteger(limit) && limit > 1 ? limit : null;
  } catch {
    return null;
  }
}

/** One folder, watched. */
export class FolderWatch {
  private watcher: fs.FSWatcher | null = null;
  private folder: { readonly dev: number; readonly ino: number } | null = null;
  private changed = new Set<string>();
  private events = 0;
  private lost = true;
  private readonly limit = queueLimit();

  constructor(readonly dir: string) {}

  /**
   * The names changed since the last call, or null when every file must be checked: the first
   * call, an event that may have been lost, a watcher that failed, a folder replaced, or a platform
   * whose events are not exact. Call it after {@link settled}, and check what it returns after it.
   */
  take(): ReadonlySet<string> | null {
    const folder = folderIdentity(this.dir);
    if (this.watcher === null || folder === null || this.folder === null || folder.dev !== this.folder.dev || folder.ino !== this.folder.ino) this.restart(folder);
    const limit = this.limit;
    const lost = this.lost || limit === null || this.events >= limit - 1;
    const changed = this.changed;
    this.changed = new Set();
    this.events = 0;
    this.lost = this.watcher === null;
    return lost ? null : changed;
  }

  /** Stops watching. */
  close(): void {
    this.watcher?.close();
    this.watcher = null;
  }

  private restart(folder: { readonly dev: number; readonly ino: number } | null): void {
    this.close();
    this.lost = true;
    this.folder = folder;
    if (folder === null || this.limit === null) return;
    try {
      const watcher = fs.watch(this.dir, { persistent: false }, (_event, name) => {
        this.events++;
        if (typeof name === 'string') this.changed.add(name);
        else this.lost = true;
      });
      watcher.on('error', () => {
        this.lost = true;
        watcher.close();
        if (this.watcher === watcher) this.watcher = null;
      });
      this.watcher = watcher;
    } catch {
      this.watcher = null;
    }
  }
}

function folderIdentity(dir: string): { readonly dev: number; readonly ino: number } | null {
  try {
    const s = fs.statSync(dir);
    return s.isDirectory() ? { dev: s.dev, ino: s.ino } : null;
  } catch {
    return null;
  }
}
