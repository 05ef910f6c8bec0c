import { describe, expect, it } from 'vitest';
import { renderSweepReport, showMetric } from '../../../src/report/sweep-page.ts';

describe('the sweep page', () => {
  it('shows the win rate and the return in percent, as the terminal does', () => {
    expect(showMetric('winRate', 0.4567)).toBe('45.67%');
    expect(showMetric('returnPct', -4.02)).toBe('-4.02%');
    expect(showMetric('sharpe', 1.23456)).toBe('1.2346');
    expect(showMetric('winRate', null)).toBe('-');
    const html = renderSweepReport({
      title: 't',
      metric: 'winRate',
      axes: ['fast', 'slow'],
      data: 'synthetic',
      rows: [
        { rank: 1, params: { fast: 5, slow: 20 }, metrics: { winRate: 0.5, netPnl: 10 }, passed: true, error: null },
        { rank: 2, params: { fast: 10, slow: 20 }, metrics: { winRate: 0.25, netPnl: 5 }, passed: true, error: null },
      ],
    });
    // The table and the heatmap cell, in percent; the cell's data-value keeps the number.
    expect(html).toContain('<td class="num">50.00%</td>');
    expect(html).toMatch(/data-value="0.25"[^>]*>25.00%<\/td>/);
    expect(html).not.toContain('>0.5000<');
  });
});
