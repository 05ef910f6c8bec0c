import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { candleValues, chartData } from '../../../src/report/chart-data.ts';
import { PriceGrid } from '../../../src/engine/ticks.ts';
import { formatDuration, formatMoney, formatTime, renderSummary } from '../../../src/report/format.ts';
import { renderReport } from '../../../src/report/html.ts';
import { cents, computeStatistics } from '../../../src/report/statistics.ts';
import { annotatedRun, generatedRun } from './fixture.ts';

interface Embedded {
  chart: {
    candles: { t: number[]; o: number[]; h: number[]; l: number[]; c: number[]; barsPerCandle: number };
    equity: (number | null)[];
    drawdown: (number | null)[];
    markers: { t: number; kind: string }[];
    overlays: { name: string; values: (number | null)[] }[];
  };
}

function embeddedData(html: string): Embedded {
  const match = /<script type="application\/json" id="report-data">(.*?)<\/script>/s.exec(html);
  if (!match) throw new Error('no embedded report data');
  return JSON.parse(match[1]!);
}

describe('formatting', () => {
  it('is locale-free and deterministic', () => {
    expect(formatMoney(-1234567.5)).toBe('-1,234,567.50');
    expect(formatMoney(0.004)).toBe('0.00');
    expect(formatMoney(-0.004)).toBe('0.00');
    expect(formatMoney(null)).toBe('-');
    expect(formatDuration(3 * 86_400_000 + 4 * 3_600_000 + 5 * 60_000)).toBe('3d 4h 05m');
    expect(formatDuration(45 * 60_000)).toBe('45m');
    expect(formatTime(Date.parse('2024-01-10T22:59:00Z'))).toBe('2024-01-10 22:59');
    expect(formatTime(Date.parse('2024-01-10T22:59:30Z'))).toBe('2024-01-10 22:59:30');
  });

  it('renders an aligned summary with the verdict and hash', () => {
    const input = generatedRun(400);
    const summary = renderSummary(computeStatistics(input), input);
    const lines = summary.trimEnd().split('\n');
    expect(lines[0]).toBe(input.title);
    expect(lines[1]).toMatch(/^ {2}Account +FAILED \(daily loss limit crossed once \(temporary\)\)$/);
    const valueColumn = lines[1]!.indexOf('FAILED');
    for (const line of lines.slice(1)) expect(line.length).toBeGreaterThan(valueColumn);
    expect(summary).toContain('sha256:0123456789abcdef');
  });

  it("leads with the evaluation's verdict when the run has one, in the summary and at the top of the report", () => {
    const input = annotatedRun(3000, 1000);
    const evaluation = input.evaluation!;
    const open = { ...input, passed: true, verdict: 'no permanent violation' };
    const summary = renderSummary(computeStatistics(input), open);
    expect(summary).toMatch(/^ {2}Evaluation +FAILED \(Generated 50K: failed on trading day/m);
    expect(summary).toContain(evaluation.outcome.summary);
    expect(summary).not.toContain('no permanent violation');
    const html = renderReport(open);
    expect(html).toContain('<span class="badge fail" id="verdict">FAILED</span>');
    expect(html).not.toContain('no permanent violation');
    const notPassed = {
      ...open,
      evaluation: {
        ...evaluation,
        outcome: { ...evaluation.outcome, status: 'open' as const, summary: 'did not pass' },
      },
    };
    expect(renderReport(notPassed)).toContain('<span class="badge open" id="verdict">NOT PASSED</span>');
  });
});

describe('renderReport', () => {
  it('is byte-identical for the same input', () => {
    expect(renderReport(generatedRun(2000))).toBe(renderReport(generatedRun(2000)));
  });

  it('is self-contained: inline scripts and styles, no external reference', () => {
    const html = renderReport(generatedRun(500));
    expect(html).not.toMatch(/<script[^>]+src=/i);
    expect(html).not.toMatch(/<link[^>]+href=/i);
    expect(html).not.toMatch(/(src|href)=["']?https?:/i);
    expect(html).toContain('Lightweight Charts');
  });

  it('escapes text from the input', () => {
    const input = { ...generatedRun(300), title: '</script><b>x</b>', verdict: '<img src=x onerror=alert(1)>' };
    const html = renderReport(input);
    expect(html).toContain('&lt;/script&gt;&lt;b&gt;x&lt;/b&gt;');
    expect(html).not.toContain('<img src=x');
  });

  it('merges bars into candles above the limit, keeping every high and low, and converts ticks to prices', () => {
    const input = generatedRun(50_000);
    const html = renderReport(input, computeStatistics(input), { maxPoints: 1000 });
    const { chart } = embeddedData(html);
    expect(chart.candles.barsPerCandle).toBe(50);
    expect(chart.candles.t).toHaveLength(1000);
    expect(html).toContain('Downsampled: each candle merges 50 bars');
    const high = Math.max(...Array.from(input.bars.high)) * 0.25;
    const low = Math.min(...Array.from(input.bars.low)) * 0.25;
    expect(Math.max(...chart.candles.h)).toBe(high);
    expect(Math.min(...chart.candles.l)).toBe(low);
    expect(chart.candles.o[1]).toBe(input.bars.open[50]! * 0.25);
    expect(chart.candles.c[0]).toBe(input.bars.close[49]! * 0.25);
    // Equity and drawdown share the candles' time index; the deepest drawdown survives the merge.
    expect(chart.equity).toHaveLength(1000);
    expect(Math.min(...chart.drawdown.map((v) => v ?? 0))).toBe(-computeStatistics(input).maxDrawdown);
    // Every marker sits on a candle.
    const times = new Set(chart.candles.t);
    for (const marker of chart.markers) expect(times.has(marker.t)).toBe(true);
    expect(chart.markers.filter((m) => m.kind === 'entry')).toHaveLength(input.trades.length);
  });
});

describe('chart data', () => {
  it('places overlays per candle (null where undefined) and trade markers on the candle holding their instant', () => {
    const input = generatedRun(300);
    const values = Float64Array.from(input.bars.close, (c, i) => (i < 10 ? Number.NaN : c));
    const data = chartData({ ...input, overlays: [{ name: 'close', values }] }, new PriceGrid(0.25, 12.5), {
      maxCandles: 100,
      maxMarkers: 1000,
      decisions: [{ time: input.bars.time[150]! + 1, text: 'MAX_POSITION_SIZE' }],
    });
    expect(data.candles.barsPerCandle).toBe(3);
    expect(data.overlays[0]!.values.slice(0, 4)).toEqual([null, null, null, input.bars.close[11]! * 0.25]);
    const decision = data.markers.find((m) => m.kind === 'decision')!;
    expect(decision).toMatchObject({ t: input.bars.time[150]! / 1000, text: 'MAX_POSITION_SIZE' });
    const first = input.trades.at(0)!;
    const entry = data.markers.find((m) => m.kind === 'entry')!;
    expect(entry.t).toBe(
      input.bars.time[Math.floor(Array.from(input.bars.time).indexOf(first.entryTime) / 3) * 3]! / 1000,
    );
    expect(entry.price).toBe(first.entryPrice * 0.25);
    for (let k = 1; k < data.markers.length; k++)
      expect(data.markers[k]!.t).toBeGreaterThanOrEqual(data.markers[k - 1]!.t);
  });

  it('breaks overlays (a null point) at the first candle after each gap and at each roll, like the candles', () => {
    const input = generatedRun(300);
    const values = Float64Array.from(input.bars.close);
    const gaps = [{ from: input.bars.time[99]! + 60_000, to: input.bars.time[100]!, flattened: 0 }];
    const rolls = [{ time: input.bars.time[201]!, contract: 'ESM4' }];
    const grid = new PriceGrid(0.25, 12.5);
    const options = { maxCandles: 100, maxMarkers: 1000, decisions: [] };
    const data = chartData({ ...input, gaps, rolls, overlays: [{ name: 'close', values }] }, grid, options);
    const nulls = data.overlays[0]!.values.flatMap((v, candle) => (v === null ? [candle] : []));
    // Three bars a candle: bar 100 is in candle 33, bar 201 in candle 67.
    expect(nulls).toEqual([33, 67]);
    expect(data.overlays[0]!.values[34]).toBe(input.bars.close[104]! * 0.25);
  });

  it('draws a plot kept at the candles (candleValues, or every divisor of the candle) as the plot of every bar', () => {
    const grid = new PriceGrid(0.25, 12.5);
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 400 }),
        fc.integer({ min: 1, max: 60 }),
        fc.integer({ min: 1, max: 12 }),
        fc.constantFrom<'price' | 'own'>('price', 'own'),
        (n, maxCandles, divisor, pane) => {
          const input = annotatedRun(n, Math.floor(n / 3));
          // NaN now and then (a plot's warm-up), prices on and off the grid.
          const values = Float64Array.from(input.bars.close, (c, i) => (i % 7 === 3 ? Number.NaN : c + (i % 3) / 4));
          const options = { maxCandles, maxMarkers: 1000, decisions: [] };
          const whole = chartData({ ...input, overlays: [{ name: 'p', pane, values }] }, grid, options);
          const k = whole.candles.barsPerCandle;
          const every = k % divisor === 0 ? divisor : k;
          const kept = candleValues(values, every);
          expect(kept).toHaveLength(Math.ceil(n / every));
          const cut = chartData(
            { ...input, overlays: [{ name: 'p', pane, values: kept, barsPerValue: every }] },
            grid,
            options,
          );
          expect(cut).toEqual(whole);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('renders the same report from a plot kept at its candles, and refuses one it cannot draw', () => {
    const input = annotatedRun(3000);
    const values = Float64Array.from(input.bars.close, (c, i) => (i < 20 ? Number.NaN : c));
    const whole = renderReport({ ...input, overlays: [{ name: 'close', values }] }, undefined, { maxPoints: 200 });
    const kept = { name: 'close', values: candleValues(values, 15), barsPerValue: 15 };
    expect(renderReport({ ...input, overlays: [kept] }, undefined, { maxPoints: 200 })).toBe(whole);
    // 3,000 bars at most 1,000 candles: 3 bars a candle, which a value every 15 bars does not give.
    expect(() => renderReport({ ...input, overlays: [kept] }, undefined, { maxPoints: 1000 })).toThrow(
      /every 15 bars: a chart of 3 bars a candle/,
    );
    expect(() =>
      renderReport({ ...input, overlays: [{ ...kept, values: kept.values.subarray(1) }] }, undefined, {
        maxPoints: 200,
      }),
    ).toThrow(/one per 15 bars \(200\)/);
  });

  it('marks each gap of the run at the first candle after it, saying how long and what it closed', () => {
    const input = generatedRun(300);
    const to = input.bars.time[200]!;
    const gaps = [
      { from: to - 14 * 86_400_000, to, flattened: -1 },
      { from: input.bars.time[100]! - 100 * 3_600_000, to: input.bars.time[100]!, flattened: 0 },
    ];
    const data = chartData({ ...input, gaps }, new PriceGrid(0.25, 12.5), {
      maxCandles: 100,
      maxMarkers: 1000,
      decisions: [],
    });
    expect(data.markers.filter((m) => m.kind === 'gap')).toEqual([
      { t: input.bars.time[99]! / 1000, kind: 'gap', text: 'gap 4d 4h' },
      { t: input.bars.time[198]! / 1000, kind: 'gap', text: 'gap 14d 0h (flattened -1)' },
    ]);
  });

  it('gives each candle its last equity point and deepest drawdown, as a search per point would, for any equity times', () => {
    const input = generatedRun(400);
    const grid = new PriceGrid(0.25, 12.5);
    // Points at bar times, just before or after them, before the first bar and after the last.
    const point = fc.tuple(fc.integer({ min: -2, max: 401 }), fc.constantFrom(-1, 0, 0, 0, 1, 30_000));
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 500 }),
        fc.array(point, { maxLength: 600 }),
        fc.integer({ min: 1, max: 9 }),
        (maxCandles, points, seed) => {
          const bars = input.bars.time;
          const at = (index: number) =>
            index < 0
              ? bars[0]! + index * 60_000
              : index >= bars.length
                ? bars[bars.length - 1]! + 60_000
                : bars[index]!;
          const time = Float64Array.from(points.map(([index, offset]) => at(index) + offset).sort((a, b) => a - b));
          const equity = Float64Array.from(
            time,
            (_, i) => input.startingBalance + Math.sin(i * seed) * 1000 + i * 0.37,
          );
          const data = chartData({ ...input, equity: { time, equity } }, grid, {
            maxCandles,
            maxMarkers: 10,
            decisions: [],
          });
          const k = data.candles.barsPerCandle;
          const expectedEquity: (number | null)[] = data.candles.t.map(() => null);
          const expectedDrawdown: (number | null)[] = data.candles.t.map(() => null);
          let peak = input.startingBalance;
          time.forEach((t, i) => {
            const bar = Math.max(
              0,
              Array.from(input.bars.time).findLastIndex((b) => b <= t),
            );
            const candle = Math.floor(bar / k);
            peak = Math.max(peak, equity[i]!);
            expectedEquity[candle] = cents(equity[i]!);
            const down = cents(Math.min(0, equity[i]! - peak));
            expectedDrawdown[candle] =
              expectedDrawdown[candle] === null ? down : Math.min(expectedDrawdown[candle]!, down);
          });
          expect(data.equity).toEqual(expectedEquity);
          expect(data.drawdown).toEqual(expectedDrawdown);
        },
      ),
      { numRuns: 60 },
    );
  });
});
