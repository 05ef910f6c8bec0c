/**
 * Searches of a parameter space beside the full grid: a seeded random sample of its points, and a
 * Tree-structured Parzen Estimator (TPE), which proposes each batch where the best runs so far are dense
 * and the rest sparse. Both only ever propose points of the space (every value one of the listed ones),
 * never the same point twice, and give the same points for the same seed and results.
 */
import {
  metricScore,
  runSweep,
  sharedContext,
  type Grid,
  type Job,
  type JobResult,
  type Metric,
  type SweepContext,
  type SweepOptions,
} from './grid-sweep.ts';
import { SweepPool } from './sweep-pool.ts';
import { SEARCHES } from '../adapters/backtest/backtest-config.ts';
import { seededRandom } from '../engine/random.ts';

export { SEARCHES };
export type SearchMethod = (typeof SEARCHES)[number];

/** A point of the space as the index of its value in each dimension. */
export type PointIndex = readonly number[];

/** The number of points of a grid. */
export function spaceSize(grid: Grid): number {
  return Object.values(grid).reduce((n, values) => n * values.length, 1);
}

/** A point's parameters. */
export function pointParams(grid: Grid, point: PointIndex): Record<string, unknown> {
  return Object.fromEntries(Object.entries(grid).map(([key, values], d) => [key, values[point[d]!]]));
}

function pointKey(point: PointIndex): string {
  return point.join(',');
}

/** `count` distinct points drawn uniformly (all of them when the space is no larger). */
export function randomPoints(
  grid: Grid,
  count: number,
  random: () => number,
  taken: Set<string> = new Set(),
): PointIndex[] {
  const sizes = Object.values(grid).map((v) => v.length);
  const total = spaceSize(grid);
  const wanted = Math.min(count, total - taken.size);
  const points: PointIndex[] = [];
  // Rejection sampling is fast while the space is mostly free; past half taken, draw from the free rest.
  if (taken.size + wanted <= total / 2) {
    while (points.length < wanted) {
      const point = sizes.map((m) => Math.floor(random() * m));
      if (take(point, taken)) points.push(point);
    }
    return points;
  }
  const free: PointIndex[] = [];
  for (let k = 0; k < total; k++) {
    const point = decode(k, sizes);
    if (!taken.has(pointKey(point))) free.push(point);
  }
  for (let k = 0; k < wanted; k++) {
    const pick = k + Math.floor(random() * (free.length - k));
    [free[k], free[pick]] = [free[pick]!, free[k]!];
    taken.add(pointKey(free[k]!));
    points.push(free[k]!);
  }
  return points;
}

function take(point: PointIndex, taken: Set<string>): boolean {
  const key = pointKey(point);
  if (taken.has(key)) return false;
  taken.add(key);
  return true;
}

/** The k-th point of the grid in its enumeration order (the first dimension varies slowest). */
function decode(k: number, sizes: readonly number[]): PointIndex {
  const point = new Array<number>(sizes.length);
  for (let d = sizes.length - 1; d >= 0; d--) {
    point[d] = k % sizes[d]!;
    k = Math.floor(k / sizes[d]!);
  }
  return point;
}

export interface Observation {
  readonly point: PointIndex;
  /** Larger is better; -Infinity for a run without a value (refused parameters, no trades). */
  readonly score: number;
}

export interface TpeOptions {
  /** Share of the observations taken as the good ones (default 0.25). */
  readonly gamma?: number;
  /** Candidates drawn from the good density per proposal (default 24). */
  readonly candidates?: number;
}

/**
 * TPE's next `count` points: per dimension, a Parzen density over the value indices of the good
 * observations (l) and of the rest (g), each with a flat prior so no value is impossible; candidates drawn
 * from l, the best l/g ratio not yet run wins. Values are treated as ordered (neighbours share density),
 * which suits numeric parameters and does no harm to a list of names.
 */
export function tpeProposals(
  grid: Grid,
  observations: readonly Observation[],
  count: number,
  random: () => number,
  taken: Set<string>,
  options: TpeOptions = {},
): PointIndex[] {
  const sizes = Object.values(grid).map((v) => v.length);
  const ranked = [...observations].sort((a, b) => b.score - a.score);
  const goodCount = Math.max(1, Math.ceil((options.gamma ?? 0.25) * ranked.length));
  const good = ranked.slice(0, goodCount);
  const bad = ranked.slice(goodCount);
  const l = sizes.map((m, d) =>
    parzen(
      m,
      good.map((o) => o.point[d]!),
    ),
  );
  const g = sizes.map((m, d) =>
    parzen(
      m,
      bad.map((o) => o.point[d]!),
    ),
  );
  const proposals: PointIndex[] = [];
  const candidates = options.candidates ?? 24;
  while (proposals.length < count && taken.size < spaceSize(grid)) {
    let best: PointIndex | undefined;
    let bestScore = -Infinity;
    for (let c = 0; c < candidates; c++) {
      const point = sizes.map((_, d) => sample(l[d]!, random));
      if (taken.has(pointKey(point))) continue;
      const score = point.reduce((s, v, d) => s + Math.log(l[d]![v]!) - Math.log(g[d]![v]!), 0);
      if (score > bestScore) [best, bestScore] = [point, score];
    }
    // Every candidate already run: the good region is exhausted, so explore.
    const next = best ?? randomPoints(grid, 1, random, new Set(taken))[0]!;
    taken.add(pointKey(next));
    proposals.push(next);
  }
  return proposals;
}

/** A density over indices 0..m-1: a flat prior plus a discrete Gaussian around each observed index. */
function parzen(m: number, indices: readonly number[]): Float64Array {
  const density = new Float64Array(m).fill(1 / m);
  // Wider kernels with few observations, narrower as they accumulate (Scott's rule, at least one step).
  const width = Math.max(1, (m / 4) * Math.max(1, indices.length) ** -0.2);
  for (const centre of indices) {
    let total = 0;
    const kernel = new Float64Array(m);
    for (let v = 0; v < m; v++) total += kernel[v] = Math.exp(-((v - centre) ** 2) / (2 * width * width));
    for (let v = 0; v < m; v++) density[v]! += kernel[v]! / total;
  }
  const sum = density.reduce((s, x) => s + x, 0);
  for (let v = 0; v < m; v++) density[v]! /= sum;
  return density;
}

function sample(density: Float64Array, random: () => number): number {
  let u = random();
  for (let v = 0; v < density.length; v++) {
    u -= density[v]!;
    if (u < 0) return v;
  }
  return density.length - 1;
}

export interface SearchOptions {
  readonly method: SearchMethod;
  /** Points to run (random and tpe; the grid runs all of them). */
  readonly trials: number;
  readonly seed: number;
  /** Points run together (the sweep's lanes): TPE proposes a batch at a time. */
  readonly batch: number;
  /** Random points TPE starts from (default: a quarter of the trials, at least the batch). */
  readonly startup?: number;
}

/**
 * Drive a search: `evaluate` runs a batch of points and gives their scores (larger better), in order.
 * Returns every observation in the order run.
 */
export async function search(
  grid: Grid,
  options: SearchOptions,
  evaluate: (points: readonly PointIndex[]) => Promise<readonly number[]>,
): Promise<Observation[]> {
  const random = seededRandom(options.seed);
  const taken = new Set<string>();
  const observations: Observation[] = [];
  const run = async (points: readonly PointIndex[]) => {
    const scores = await evaluate(points);
    points.forEach((point, k) => {
      observations.push({ point, score: scores[k]! });
    });
  };
  const sizes = Object.values(grid).map((v) => v.length);
  if (options.method === 'grid') {
    await run(Array.from({ length: spaceSize(grid) }, (_, k) => decode(k, sizes)));
    return observations;
  }
  const trials = Math.min(options.trials, spaceSize(grid));
  if (options.method === 'random') {
    await run(randomPoints(grid, trials, random, taken));
    return observations;
  }
  const startup = Math.min(trials, Math.max(options.startup ?? Math.ceil(trials / 4), options.batch, 2));
  await run(randomPoints(grid, startup, random, taken));
  while (observations.length < trials) {
    await run(tpeProposals(grid, observations, Math.min(options.batch, trials - observations.length), random, taken));
  }
  return observations;
}

/** The parameter sets a random search of `trials` points with `seed` runs, in the order it runs them. */
export function randomSearchParams(grid: Grid, trials: number, seed: number): Record<string, unknown>[] {
  return randomPoints(grid, Math.min(trials, spaceSize(grid)), seededRandom(seed)).map((point) =>
    pointParams(grid, point),
  );
}

/**
 * Points TPE proposes at a time: a constant, not the number of lanes, so the points searched (and the
 * results) do not depend on `--workers`; two jobs a lane on two cores.
 */
export const SEARCH_BATCH = 4;

export interface SweepSearchOptions {
  readonly method: SearchMethod;
  readonly trials: number;
  readonly seed: number;
  readonly metric: Metric;
  /** The sample the search runs on ('all', or 'in' for a walk-forward's training window). */
  readonly sample: 'all' | 'in';
}

/**
 * A search of `grid` by backtests of `context`: each batch of points is one sweep on the same warm pool
 * (started once, the strategy compiled once), scored by the metric. Results in the order run, `index`
 * counting from 0.
 */
export async function runSearch(
  context: SweepContext,
  grid: Grid,
  options: SweepSearchOptions,
  sweep: Omit<SweepOptions, 'onResult'> & { readonly onResult?: (result: JobResult, done: number) => void } = {},
): Promise<JobResult[]> {
  const lanes = Math.max(1, sweep.workers ?? 1);
  const ownPool =
    sweep.pool === undefined && lanes > 1 ? new SweepPool(lanes, context.config.strategy.name) : undefined;
  const pool = sweep.pool ?? ownPool;
  const results: JobResult[] = [];
  // Into shared memory once, not once a batch.
  const sweepContext = lanes > 1 ? sharedContext(context) : context;
  try {
    await search(
      grid,
      { method: options.method, trials: options.trials, seed: options.seed, batch: SEARCH_BATCH },
      async (points) => {
        const jobs: Job[] = points.map((point, k) => ({
          index: results.length + k,
          params: pointParams(grid, point),
          sample: options.sample,
        }));
        const batch = await runSweep(sweepContext, jobs, {
          ...sweep,
          ...(pool ? { pool } : {}),
          onResult: (result) => sweep.onResult?.(result, results.length + 1),
        });
        results.push(...batch);
        return batch.map((r) => metricScore(r, options.metric));
      },
    );
  } finally {
    await ownPool?.close();
  }
  return results;
}
