/**
 * Seeded documents of 12 made-up words for alignment tests; every 10th shares 8 words with the one before
 * it (a partner), so a run's pairs are many and known in kind.
 */
export function madeUpDocuments(n: number, seed: number): string[][] {
  // mulberry32
  let s = seed;
  const rand = () => {
    s = (s + 0x6d2b79f5) | 0;
    let x = Math.imul(s ^ (s >>> 15), 1 | s);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 2 ** 32;
  };
  const word = () =>
    Array.from({ length: 3 + Math.floor(rand() * 6) }, () =>
      String.fromCharCode(97 + Math.floor(rand() * 26)),
    ).join('');
  const vocab = Array.from({ length: 6000 }, word);
  const pick = () => vocab[Math.floor(rand() * vocab.length)] as string;
  const docs: string[][] = [];
  for (let i = 0; i < n; i++) {
    const prev = docs[i - 1];
    const words = Array.from({ length: 12 }, pick);
    if (i % 10 === 9 && prev !== undefined) for (let w = 0; w < 8; w++) words[w] = prev[w] as string;
    docs.push(words);
  }
  return docs;
}
