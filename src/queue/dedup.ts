/**
 * The `dedup` stage: exact de-duplication across chunks without a global key table. Each embed job wrote
 * its rows' key hashes sorted and bucketed by first byte; dedup job p reads buckets [256p/P, 256(p+1)/P)
 * of every chunk (a few KB each), sorts them by (hash, chunk, row) and drops every row but the first of
 * each hash: the first occurrence in input order, as the one-machine build keeps it. Memory: 1/P of the
 * keys (20 bytes each), never all of them; nothing is held in Redis.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { ParamineError } from '../errors.js';
import { KEY_ENTRY, KEY_HEADER } from './embed.js';
import { layout, type Marker, publish, readChecked, readMarker } from './layout.js';
import { chunkName, type QueueBuild } from './state.js';

export function bucketsOf(p: number, partitions: number): [number, number] {
  return [Math.floor((p * 256) / partitions), Math.floor(((p + 1) * 256) / partitions)];
}

/** Chunk c's key entries in buckets [b0, b1). */
function readBuckets(base: string, b0: number, b1: number): Buffer {
  const fd = openSync(`${base}.keys`, 'r');
  try {
    const header = Buffer.alloc(KEY_HEADER);
    readSync(fd, header, 0, KEY_HEADER, 0);
    const from = header.readUInt32LE(4 * b0);
    const to = header.readUInt32LE(4 * b1);
    const out = Buffer.alloc((to - from) * KEY_ENTRY);
    if (out.length > 0) readSync(fd, out, 0, out.length, KEY_HEADER + from * KEY_ENTRY);
    return out;
  } finally {
    closeSync(fd);
  }
}

export interface DedupResult {
  keys: number;
  drops: number;
}

/** Runs (or finds done) dedup partition p: DIR/dedup/p-NNN.drops, u32 (chunk, row) pairs, sorted. */
export function runDedup(work: string, b: QueueBuild, p: number): DedupResult {
  const base = layout.partition(work, p);
  const done = readMarker(base);
  if (done) return done.info as unknown as DedupResult;
  const [b0, b1] = bucketsOf(p, b.partitions);
  const skipped = new Set(b.skipped);
  const parts: { chunk: number; buf: Buffer }[] = [];
  for (let c = 0; c < b.chunks.length; c++) {
    if (skipped.has(c)) continue;
    if (!readMarker(layout.chunk(work, c))) {
      throw new ParamineError('CONFLICT', `dedup partition ${p}: ${chunkName(b, c)} is not embedded yet`);
    }
    parts.push({ chunk: c, buf: readBuckets(layout.chunk(work, c), b0, b1) });
  }
  const entries: { h: Buffer; chunk: number; row: number }[] = [];
  for (const { chunk, buf } of parts) {
    for (let at = 0; at < buf.length; at += KEY_ENTRY) {
      entries.push({ h: buf.subarray(at, at + 16), chunk, row: buf.readUInt32LE(at + 16) });
    }
  }
  entries.sort((x, y) => Buffer.compare(x.h, y.h) || x.chunk - y.chunk || x.row - y.row);
  const drops: [number, number][] = [];
  for (let i = 1; i < entries.length; i++) {
    const e = entries[i] as (typeof entries)[number];
    if ((entries[i - 1] as (typeof entries)[number]).h.equals(e.h)) drops.push([e.chunk, e.row]);
  }
  drops.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  const out = new Uint32Array(drops.length * 2);
  for (const [i, [chunk, row]] of drops.entries()) {
    out[2 * i] = chunk;
    out[2 * i + 1] = row;
  }
  const info: DedupResult = { keys: entries.length, drops: drops.length };
  publish(base, { drops: new Uint8Array(out.buffer) }, { ...info });
  return info;
}

/** Every partition's drops, grouped by chunk: row numbers to leave out, ascending. */
export function readDrops(work: string, b: QueueBuild, markers: Marker[]): Map<number, number[]> {
  const byChunk = new Map<number, number[]>();
  for (let p = 0; p < b.partitions; p++) {
    const marker = markers[p];
    if (!marker) throw new ParamineError('CONFLICT', `dedup partition ${p} is not finished`);
    const bytes = readCheckedDrops(layout.partition(work, p), marker);
    for (let i = 0; i < bytes.length; i += 2) {
      const c = bytes[i] as number;
      const list = byChunk.get(c) ?? [];
      if (list.length === 0) byChunk.set(c, list);
      list.push(bytes[i + 1] as number);
    }
  }
  for (const list of byChunk.values()) list.sort((a, b) => a - b);
  return byChunk;
}

function readCheckedDrops(base: string, marker: Marker): Uint32Array {
  const buf = readChecked(base, 'drops', marker);
  const out = new Uint32Array(buf.byteLength / 4);
  new Uint8Array(out.buffer).set(buf);
  return out;
}
