/**
 * A look at an LMDB data file before lmdb-js maps it. LMDB trusts its file: a truncated one is mapped and
 * read past its end (SIGBUS), junk is walked as a B-tree. Its two meta pages say how long the file must
 * be, so a file that is not LMDB, or shorter than its newest meta page says, is refused as BAD_FILE.
 * (A flipped bit inside a data page is beyond this check: LMDB keeps no page checksums.)
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { ParamineError } from '../errors.js';

const MAGIC = 0xbeefc0de;
/** lmdb-js builds LMDB with a 24-byte page header (page number, transaction id, flags, bounds). */
const HEADER = 24;
/** Offsets inside a meta page, after the page header (MDB_meta). */
const MAGIC_AT = HEADER;
const PAGE_SIZE_AT = HEADER + 24; // mm_dbs[FREE_DBI].md_pad holds the page size
const LAST_PAGE_AT = HEADER + 24 + 2 * 48;
const TXNID_AT = LAST_PAGE_AT + 8;

function bad(path: string, why: string): ParamineError {
  return new ParamineError('BAD_FILE', `${path}: ${why}; restore it from a backup or rebuild it`, {
    field: path,
  });
}

/** Throws BAD_FILE when `path` (an existing LMDB data file) is not one, or is shorter than it says. */
export function checkLmdbFile(path: string): void {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return; // a new store: LMDB creates it
  }
  try {
    const size = fstatSync(fd).size;
    if (size === 0) return; // created but never written: LMDB initializes it
    const first = Buffer.alloc(HEADER + 160);
    if (readSync(fd, first, 0, first.length, 0) < first.length) throw bad(path, 'too short for an LMDB file');
    if (first.readUInt32LE(MAGIC_AT) !== MAGIC) throw bad(path, 'not an LMDB file (no magic number)');
    const pageSize = first.readUInt32LE(PAGE_SIZE_AT);
    if (pageSize < 512 || pageSize > 65536 || (pageSize & (pageSize - 1)) !== 0) {
      throw bad(path, `damaged meta page (page size ${pageSize})`);
    }
    const second = Buffer.alloc(first.length);
    if (readSync(fd, second, 0, second.length, pageSize) < second.length) {
      throw bad(path, 'truncated: its second meta page is missing');
    }
    const metas = [first, second].filter((m) => m.readUInt32LE(MAGIC_AT) === MAGIC);
    const newest = metas.reduce((a, b) =>
      b.readBigUInt64LE(TXNID_AT) > a.readBigUInt64LE(TXNID_AT) ? b : a,
    );
    const needed = (Number(newest.readBigUInt64LE(LAST_PAGE_AT)) + 1) * pageSize;
    // The size read again after the meta pages: another process writing the store (a service beside a
    // compaction) may have committed between the first look and the meta pages' read, and LMDB writes a
    // transaction's pages before the meta page that names them, so a later size covers any meta read.
    const now = size < needed ? fstatSync(fd).size : size;
    if (now < needed) throw bad(path, `truncated: ${now} bytes, its meta page says ${needed}`);
  } finally {
    closeSync(fd);
  }
}
