import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface Bucket {
  bucket: string;
  total: number;
  allowed: number;
  denied: number;
  error: number;
}

/** The calls over time, by policy result (uPlot: a small canvas chart, no network, no fonts). */
export function TimeSeriesChart({ buckets }: { buckets: Bucket[] }) {
  const holder = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = holder.current;
    if (!el) return;
    const data: uPlot.AlignedData = [
      buckets.map((b) => Date.parse(b.bucket) / 1000),
      buckets.map((b) => b.allowed),
      buckets.map((b) => b.denied),
      buckets.map((b) => b.error),
    ];
    const width = () => Math.max(280, el.clientWidth);
    const plot = new uPlot(
      {
        width: width(),
        height: 220,
        series: [
          {},
          { label: 'allowed', stroke: '#1a7f37', width: 2 },
          { label: 'denied', stroke: '#b42318', width: 2 },
          { label: 'error', stroke: '#9a6700', width: 2 },
        ],
        axes: [{}, { label: 'calls' }],
      },
      data,
      el,
    );
    const resize = () => plot.setSize({ width: width(), height: 220 });
    window.addEventListener('resize', resize);
    return () => {
      window.removeEventListener('resize', resize);
      plot.destroy();
    };
  }, [buckets]);
  return <div ref={holder} class="chart" role="img" aria-label={`Calls over time: ${buckets.reduce((n, b) => n + b.total, 0)} in ${buckets.length} buckets`} />;
}
