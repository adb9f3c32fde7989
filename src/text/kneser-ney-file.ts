/**
 * A Kneser–Ney model on disk: "PMKN", a little-endian uint32 header length, a JSON header (order,
 * vocabulary, discounts, array layout), then the typed arrays, each 8-byte aligned. Loading makes views
 * over one read of the file; writing goes to a temp name and is renamed into place.
 */
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { writeFileAtomic } from '../durable.js';
import { ParamineError } from '../errors.js';
import { KneserNeyLM, MAX_ORDER } from './kneser-ney.js';
import { PairTable } from './pair-table.js';

const MAGIC = 'PMKN';
const FORMAT_VERSION = 1;
const ARRAYS = ['contextKeys', 'contextIds', 'entryKeys', 'entryIds', 'piece', 'gamma', 'next'] as const;
type ArrayName = (typeof ARRAYS)[number];
const TYPES = { u32: Uint32Array, i32: Int32Array, f32: Float32Array } as const;

const headerSchema = z.object({
  version: z.literal(FORMAT_VERSION),
  order: z.number().int().min(1).max(MAX_ORDER),
  words: z.array(z.string()).min(3),
  discounts: z.array(z.tuple([z.number(), z.number(), z.number()])),
  ngrams: z.array(z.number().int().nonnegative()),
  contexts: z.number().int().nonnegative(),
  entries: z.number().int().nonnegative(),
  arrays: z.array(
    z.object({
      name: z.enum(ARRAYS),
      type: z.enum(['u32', 'i32', 'f32']),
      offset: z.number().int().nonnegative(),
      length: z.number().int().nonnegative(),
    }),
  ),
});

const align8 = (n: number) => Math.ceil(n / 8) * 8;

export function lmToBuffer(lm: KneserNeyLM): Buffer {
  const p = lm.parts;
  const ctx = p.contexts.toArrays();
  const ent = p.entries.toArrays();
  const arrays: Record<ArrayName, Uint32Array | Int32Array | Float32Array> = {
    contextKeys: ctx.keys,
    contextIds: ctx.ids,
    entryKeys: ent.keys,
    entryIds: ent.ids,
    piece: p.piece,
    gamma: p.gamma,
    next: p.next,
  };
  let offset = 0;
  const layout = ARRAYS.map((name) => {
    const a = arrays[name];
    const type = a instanceof Float32Array ? 'f32' : a instanceof Int32Array ? 'i32' : 'u32';
    const entry = { name, type, offset, length: a.length } as const;
    offset = align8(offset + a.byteLength);
    return entry;
  });
  const header = Buffer.from(
    JSON.stringify({
      version: FORMAT_VERSION,
      order: p.order,
      words: p.words,
      discounts: p.discounts,
      ngrams: p.ngrams,
      contexts: ctx.size,
      entries: ent.size,
      arrays: layout,
    }),
  );
  const start = align8(8 + header.length);
  const out = Buffer.alloc(start + offset);
  out.write(MAGIC, 0, 'latin1');
  out.writeUInt32LE(header.length, 4);
  header.copy(out, 8);
  for (const { name, offset: at } of layout) {
    const a = arrays[name];
    Buffer.from(a.buffer, a.byteOffset, a.byteLength).copy(out, start + at);
  }
  return out;
}

export function lmFromBuffer(buf: Buffer, where = 'model'): KneserNeyLM {
  const bad = (why: string) => new ParamineError('BAD_FILE', `${where}: ${why}`, { field: where });
  if (buf.length < 8 || buf.toString('latin1', 0, 4) !== MAGIC) throw bad('not a paramine Kneser–Ney model');
  const len = buf.readUInt32LE(4);
  let header: z.infer<typeof headerSchema>;
  try {
    header = headerSchema.parse(JSON.parse(buf.toString('utf8', 8, 8 + len)));
  } catch (e) {
    throw bad(`bad header (${(e as Error).message.slice(0, 200)})`);
  }
  // Typed-array views need an aligned offset into their ArrayBuffer.
  const data = buf.byteOffset % 8 === 0 && buf.buffer instanceof ArrayBuffer ? buf : Buffer.from(buf);
  const start = align8(8 + len);
  const views = {} as Record<ArrayName, Uint32Array | Int32Array | Float32Array>;
  for (const a of header.arrays) {
    const T = TYPES[a.type];
    const at = data.byteOffset + start + a.offset;
    if (start + a.offset + a.length * 4 > data.length) throw bad(`truncated (${a.name})`);
    views[a.name] = new T(data.buffer as ArrayBuffer, at, a.length);
  }
  for (const name of ARRAYS) if (!views[name]) throw bad(`array ${name} missing`);
  return new KneserNeyLM({
    order: header.order,
    words: header.words,
    discounts: header.discounts,
    ngrams: header.ngrams,
    contexts: PairTable.fromArrays({
      keys: views.contextKeys as Uint32Array,
      ids: views.contextIds as Int32Array,
      size: header.contexts,
    }),
    entries: PairTable.fromArrays({
      keys: views.entryKeys as Uint32Array,
      ids: views.entryIds as Int32Array,
      size: header.entries,
    }),
    piece: views.piece as Float32Array,
    gamma: views.gamma as Float32Array,
    next: views.next as Int32Array,
  });
}

export async function saveLm(path: string, lm: KneserNeyLM): Promise<void> {
  await writeFileAtomic(path, lmToBuffer(lm));
}

export async function loadLm(path: string): Promise<KneserNeyLM> {
  let buf: Buffer;
  try {
    buf = await readFile(path);
  } catch (e) {
    throw new ParamineError('FILE_NOT_FOUND', `cannot read the language model ${path}`, { cause: e });
  }
  return lmFromBuffer(buf, path);
}
