/**
 * `compute`, remembered for up to `held` distinct keys: when full, the memory starts over (simpler than an
 * LRU, bounded, and refilled by the next few calls). For functions whose answer depends on the key alone.
 */
export function remembered<V>(compute: (key: string) => V, held: number): (key: string) => V {
  const memory = new Map<string, V>();
  return (key) => {
    const known = memory.get(key);
    if (known !== undefined || memory.has(key)) return known as V;
    const value = compute(key);
    if (memory.size >= held) memory.clear();
    memory.set(key, value);
    return value;
  };
}
