/**
 * Deterministic "embeddings" from hashed character trigrams and words: texts sharing words get
 * close vectors, which is enough for the mock provider and the simulator to make search tests meaningful.
 */
export function hashEmbedding(text: string, dims = 64): number[] {
  const v = new Array<number>(dims).fill(0);
  const norm = text.toLowerCase();
  const add = (token: string, weight: number) => {
    let h = 0x811c9dc5;
    for (let i = 0; i < token.length; i++) h = Math.imul(h ^ token.charCodeAt(i), 0x01000193);
    const idx = (h >>> 0) % dims;
    v[idx] = (v[idx] as number) + ((h & 0x80000000) !== 0 ? -weight : weight);
  };
  for (const word of norm.split(/[^\p{L}\p{N}]+/u)) if (word) add(word, 1);
  for (let i = 0; i + 3 <= norm.length; i++) add(norm.slice(i, i + 3), 0.25);
  const len = Math.hypot(...v) || 1;
  return v.map((x) => x / len);
}
