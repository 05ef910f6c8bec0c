import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { downsampleMinMax } from '../../../src/report/downsample.ts';
import { formatDuration, formatMoney, formatTime, renderSummary } from '../../../src/report/format.ts';
import { renderReport } from '../../../src/report/html.ts';
import { computeStatistics } from '../../../src/report/statistics.ts';
import { generatedRun } from './fixture.ts';

function embeddedData(html: string): { charts: { price: { x: number[]; close: (number | null)[] } } } {
  const match = /<script type="application\/json" id="report-data">(.*?)<\/script>/s.exec(html);
  if (!match) throw new Error('no embedded report data');
  return JSON.parse(match[1]!);
}

describe('downsampleMinMax', () => {
  it('keeps short series whole', () => {
    expect(downsampleMinMax([1, 2, 3], [5, 6, 7], 10)).toEqual({ time: [1, 2, 3], value: [5, 6, 7] });
  });

  it('keeps the lowest and highest point of each bucket, in time order', () => {
    // Two buckets of four points.
    const series = downsampleMinMax([0, 1, 2, 3, 4, 5, 6, 7], [5, 9, 1, 4, 3, 3, 8, 2], 4);
    expect(series).toEqual({ time: [1, 2, 6, 7], value: [9, 1, 8, 2] });
  });

  it('never exceeds maxPoints and keeps the global extremes', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: -1000, max: 1000 }), { minLength: 1, maxLength: 500 }), fc.integer({ min: 2, max: 60 }), (values, maxPoints) => {
        const time = values.map((_, i) => i);
        const series = downsampleMinMax(time, values, maxPoints);
        expect(series.time.length).toBeLessThanOrEqual(Math.max(maxPoints, values.length <= maxPoints ? values.length : 0));
        expect(Math.min(...series.value)).toBe(Math.min(...values));
        expect(Math.max(...series.value)).toBe(Math.max(...values));
        for (let i = 1; i < series.time.length; i++) expect(series.time[i]!).toBeGreaterThan(series.time[i - 1]!);
      }),
    );
  });
});

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
    expect(html).toContain('uPlot');
  });

  it('escapes text from the input', () => {
    const input = { ...generatedRun(300), title: '</script><b>x</b>', verdict: '<img src=x onerror=alert(1)>' };
    const html = renderReport(input);
    expect(html).toContain('&lt;/script&gt;&lt;b&gt;x&lt;/b&gt;');
    expect(html).not.toContain('<img src=x');
  });

  it('downsamples long series and converts ticks to prices', () => {
    const input = generatedRun(50_000);
    const html = renderReport(input, computeStatistics(input), { maxPoints: 1000 });
    const data = embeddedData(html);
    const drawnCloses = data.charts.price.close.filter((v) => v !== null).length;
    expect(drawnCloses).toBeLessThanOrEqual(1000);
    expect(html).toContain('Downsampled: price drawn from');
    // Prices are decimals on the 0.25 grid.
    for (const close of data.charts.price.close) if (close !== null) expect((close * 4) % 1).toBe(0);
    const first = input.bars.close[0]! * 0.25;
    expect(data.charts.price.close[0]).toBe(first);
  });
});
