/**
 * better-sqlite3's class as it behaves where SQLite cannot put its file in WAL mode, for
 * `vi.mock('better-sqlite3', …)`. A VFS without shared memory (a file system that cannot share the WAL
 * index) is what refuses WAL, and better-sqlite3 can choose neither a VFS nor URI options (`nolock=1`), nor
 * does Linux offer a file system here that would refuse it: the class is given SQLite's answer there, the
 * journal mode in force. Everything else is SQLite's own, the file included.
 *
 *     vi.mock('better-sqlite3', async (importOriginal) =>
 *       (await import('../helpers/sqlite-without-wal.js')).withoutWal(await importOriginal()));
 */
type Driver = typeof import('better-sqlite3');

export function withoutWal({ default: Database }: { default: Driver }): { default: Driver } {
  class WithoutSharedMemory extends Database {
    override pragma(source: string, options?: { simple?: boolean }): unknown {
      // What SQLite does where the VFS has no shared memory: the mode is left as it is, and answered.
      if (/^journal_mode\s*=\s*wal$/i.test(source.trim())) return super.pragma('journal_mode', options);
      return super.pragma(source, options);
    }
  }
  return { default: WithoutSharedMemory as unknown as Driver };
}
