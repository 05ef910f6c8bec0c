/**
 * Min/max bucket downsampling: a long series becomes at most `maxPoints` points that keep every spike,
 * because each bucket contributes its lowest and its highest point in time order. A million bars draw
 * as the same picture from 20,000 points.
 */

export const DEFAULT_MAX_POINTS = 20_000;

export interface Series {
  readonly time: number[];
  readonly value: number[];
}

export function downsampleMinMax(
  time: ArrayLike<number>,
  value: ArrayLike<number>,
  maxPoints = DEFAULT_MAX_POINTS,
): Series {
  const length = Math.min(time.length, value.length);
  if (maxPoints < 2) throw new RangeError(`maxPoints must be at least 2, got ${maxPoints}`);
  if (length <= maxPoints) {
    return { time: Array.from({ length }, (_, i) => time[i] as number), value: Array.from({ length }, (_, i) => value[i] as number) };
  }
  const buckets = Math.floor(maxPoints / 2);
  const out: Series = { time: [], value: [] };
  for (let bucket = 0; bucket < buckets; bucket++) {
    const start = Math.floor((bucket * length) / buckets);
    const end = Math.floor(((bucket + 1) * length) / buckets);
    let low = start;
    let high = start;
    for (let i = start + 1; i < end; i++) {
      if ((value[i] as number) < (value[low] as number)) low = i;
      if ((value[i] as number) > (value[high] as number)) high = i;
    }
    const first = Math.min(low, high);
    const second = Math.max(low, high);
    out.time.push(time[first] as number);
    out.value.push(value[first] as number);
    if (second !== first) {
      out.time.push(time[second] as number);
      out.value.push(value[second] as number);
    }
  }
  return out;
}
