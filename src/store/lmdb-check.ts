/**
 * A look at an LMDB data file before lmdb-js maps it. LMDB trusts its file: a truncated one is mapped and
 * read past its end (SIGBUS), junk is walked as a B-tree. So a file that is not LMDB, or that ends before a
 * page its newest meta page reaches through the trees' root and branch pages (the free list's, the main
 * tree's and each named database's), is refused as BAD_FILE. The meta page's last page number is no measure
 * of the length: LMDB does not write a page dirtied and freed in the same transaction ("loose", now on the
 * free list), so a sound file may end short of it (seen: a 400,000-sentence store 10 pages short, refused
 * before). (A flipped bit inside a data page, or a cut that takes only free pages or the overflow pages of long
 * values, is beyond this check: LMDB keeps no page checksums.)
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { ParamineError } from '../errors.js';

const MAGIC = 0xbeefc0de;
/** lmdb-js builds LMDB with a 24-byte page header (page number, transaction id, flags, bounds). */
const HEADER = 24;
/** Offsets inside a meta page, after the page header (MDB_meta: magic, version, address, map size, dbs). */
const MAGIC_AT = HEADER;
const DBS_AT = HEADER + 24;
const PAGE_SIZE_AT = DBS_AT; // mm_dbs[FREE_DBI].md_pad holds the page size
/** MDB_db: 48 bytes, its depth at 6, its root page number at 40. */
const DB_SIZE = 48;
const ROOT_IN_DB = 40;
const DEPTH_IN_DB = 6;
const TXNID_AT = DBS_AT + 2 * DB_SIZE + 8;
const NO_PAGE = 0xffffffffffffffffn;
/** Page flags (at 18) and a leaf page's node layout (MDB_node: size, flags, key size, key, data). */
const FLAGS_AT = 18;
const LOWER_AT = 20;
const P_BRANCH = 0x01;
const F_SUBDATA = 0x02;
const NODE_HEADER = 8;

function bad(path: string, why: string): ParamineError {
  return new ParamineError('BAD_FILE', `${path}: ${why}; restore it from a backup or rebuild it`, {
    field: path,
  });
}

interface Tree {
  root: number;
  depth: number;
}

/** The free list's and the main tree's, and (where the main tree is one leaf) each named database's. */
function trees(fd: number, meta: Buffer, pageSize: number, pages: number): Tree[] {
  const tree = (buf: Buffer, at: number): Tree | undefined => {
    const root = buf.readBigUInt64LE(at + ROOT_IN_DB);
    return root === NO_PAGE ? undefined : { root: Number(root), depth: buf.readUInt16LE(at + DEPTH_IN_DB) };
  };
  const main = tree(meta, DBS_AT + DB_SIZE);
  const out = [tree(meta, DBS_AT), main];
  if (main !== undefined && main.root < pages && main.depth === 1) {
    const page = readPage(fd, main.root, pageSize);
    forNodes(page, (at) => {
      const flags = page.readUInt16LE(at + 4);
      const db = at + NODE_HEADER + page.readUInt16LE(at + 6);
      if ((flags & F_SUBDATA) !== 0 && db + DB_SIZE <= pageSize) out.push(tree(page, db));
    });
  }
  return out.filter((t): t is Tree => t !== undefined);
}

function readPage(fd: number, pgno: number, pageSize: number): Buffer {
  const page = Buffer.alloc(pageSize);
  readSync(fd, page, 0, pageSize, pgno * pageSize);
  return page;
}

/** Calls `each` with the offset of every node of a branch or leaf page. */
function forNodes(page: Buffer, each: (at: number) => void): void {
  const nodes = page.readUInt16LE(LOWER_AT) >> 1;
  for (let n = 0; n < nodes; n++) {
    const at = HEADER + page.readUInt16LE(HEADER + 2 * n);
    if (at + NODE_HEADER > page.length) throw new Error('a node past its page');
    each(at);
  }
}

/**
 * The highest page the tree's root and branch pages name (leaves included, their overflow pages not), read
 * level by level; a page past the file's `pages` ends the walk (it is the answer).
 */
function deepest(fd: number, t: Tree, pageSize: number, pages: number): number {
  let max = t.root;
  let level = [t.root];
  for (let d = 1; d < t.depth && max < pages; d++) {
    const next: number[] = [];
    for (const p of level) {
      const page = readPage(fd, p, pageSize);
      if ((page.readUInt16LE(FLAGS_AT) & P_BRANCH) === 0) throw new Error('a branch page is not one');
      forNodes(page, (at) => {
        // A branch node's child: its size fields and flags hold the page number (NODEPGNO).
        const child =
          page.readUInt16LE(at) + page.readUInt16LE(at + 2) * 2 ** 16 + page.readUInt16LE(at + 4) * 2 ** 32;
        max = Math.max(max, child);
        if (d + 1 < t.depth) next.push(child);
      });
      if (max >= pages) break;
    }
    level = next;
  }
  return max;
}

/** Throws BAD_FILE when `path` (an existing LMDB data file) is not one, or is cut short of a page it uses. */
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
    // lmdb-js keeps three meta pages with overlapping sync (at 0, half a page and a page), LMDB two.
    const metas = [first];
    for (const at of [pageSize / 2, pageSize]) {
      const m = Buffer.alloc(first.length);
      if (readSync(fd, m, 0, m.length, at) < m.length) throw bad(path, 'truncated: a meta page is missing');
      if (m.readUInt32LE(MAGIC_AT) === MAGIC) metas.push(m);
    }
    const newest = metas.reduce((a, b) =>
      b.readBigUInt64LE(TXNID_AT) > a.readBigUInt64LE(TXNID_AT) ? b : a,
    );
    const pages = Math.floor(size / pageSize);
    let last = 1;
    try {
      for (const t of trees(fd, newest, pageSize, pages))
        last = Math.max(last, deepest(fd, t, pageSize, pages));
    } catch (e) {
      throw bad(path, `damaged B-tree (${(e as Error).message})`);
    }
    const needed = (last + 1) * pageSize;
    // The size read again: another process writing the store (a service beside a compaction) may have
    // committed between the first look and the meta pages' read, and LMDB writes a transaction's pages
    // before the meta page that names them, so a later size covers any meta read.
    const now = size < needed ? fstatSync(fd).size : size;
    if (now < needed) throw bad(path, `truncated: ${now} bytes, a page in use ends at ${needed}`);
  } finally {
    closeSync(fd);
  }
}
