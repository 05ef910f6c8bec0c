/**
 * An empty array made for objects (or strings) from the start. V8 makes `[]` an array of small integers;
 * the first object pushed turns it into an array of objects, and code compiled on the last run's arrays,
 * which were already of objects, is thrown away ("not a Smi") when a new run's first push turns its own:
 * one deoptimization per such array and per run for the first five runs of a process, each followed by
 * compiling the function again.
 */
export function objectArray<T>(): T[] {
  const array: (T | null)[] = [null];
  array.length = 0;
  return array as T[];
}
