// Small statistics helpers (latency histograms are in ac-client.cts).

export function median(values: readonly number[]): number {
  const finite = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (finite.length === 0) return Number.NaN;
  const mid = finite.length >> 1;
  return finite.length % 2 === 1 ? finite[mid]! : (finite[mid - 1]! + finite[mid]!) / 2;
}

export function max(values: readonly number[]): number {
  const finite = values.filter((v) => Number.isFinite(v));
  return finite.length === 0 ? Number.NaN : Math.max(...finite);
}
