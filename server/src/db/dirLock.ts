/**
 * An exclusive lock on a data directory: a lock file created atomically, holding the owner's pid and
 * start time. A lock whose owner is gone (crash, kill -9) is taken over; a live owner means refusal.
 * (Two servers taking over one stale lock at the same instant is left to Postgres' own postmaster.pid.)
 */
import { randomBytes } from 'node:crypto';
import { linkSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

export interface DirLock {
  release(): void;
}

export class DirLockedError extends Error {}

/** `/proc/<pid>/stat` field 22: the process start time, which tells a reused pid apart. */
function startTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

export function acquireDirLock(path: string): DirLock {
  const me = `${process.pid} ${startTime(process.pid) ?? ''}\n`;
  // The lock appears whole: written to a private file first, then hard-linked into place (atomic; fails if taken).
  const mine = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
  writeFileSync(mine, me, { mode: 0o600 });
  try {
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        linkSync(mine, path);
        let released = false;
        return {
          release() {
            if (released) return;
            released = true;
            // Only our own lock: after a takeover race the file may be another server's.
            try {
              if (readFileSync(path, 'utf8') === me) rmSync(path, { force: true });
            } catch {
              // already gone
            }
          },
        };
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      let holder: string;
      try {
        holder = readFileSync(path, 'utf8');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue; // released meanwhile: try again
        throw err;
      }
      const [pidText, started] = holder.trim().split(' ');
      const pid = Number(pidText);
      if (Number.isInteger(pid) && pid > 0 && startTime(pid) !== undefined && startTime(pid) === started) {
        throw new DirLockedError(
          `SVC_DATA_DIR ${dirname(path)} is in use by another svc server (pid ${pid}); stop it or set SVC_DATA_DIR to another directory`,
        );
      }
      rmSync(path, { force: true }); // stale: its owner is gone
    }
    throw new DirLockedError(`could not lock ${path}`);
  } finally {
    rmSync(mine, { force: true });
  }
}
