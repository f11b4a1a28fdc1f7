// The bench's chart (scripts/bench-chart.mjs, docs/benchmarks.svg): from a bench's figures, one
// bar group per comparison of scripts/bench-comparisons.mjs, each side's bar ending at its median
// and its whisker running from its min to its max on one linear scale; a comparison that could not
// be measured keeps its group and says why.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderChart } from '../../scripts/bench-chart.mjs';
import { comparisons } from '../../scripts/bench-comparisons.mjs';

const ms = (min, median, max) => ({ min, median, max, n: 5 });
const pair = (a, b) => ({ a, b, ratio: ms(a.min / b.max, a.median / b.median, a.max / b.min) });
const FIGURES = {
  warmVsBare: {
    parking: { inEffect: true, how: 'in effect: 2 node processes waited' },
    runMs: ms(30, 34, 41),
    parkedOffRunMs: ms(60, 66, 90),
    bareNodeMs: ms(45, 50, 58),
    ratio: ms(0.6, 0.68, 0.8),
    parkedOffRatio: ms(1.1, 1.3, 1.6),
  },
  sdkFlow: {
    delay25ms: {
      coldWithDeps: pair(ms(600, 650, 900), ms(580, 640, 700)),
      pooledWithDeps: pair(ms(80, 95, 120), ms(700, 810, 1000)),
      pooledVsSnapshot: { na: 'configureSandbox refuses warmPool here' },
    },
  },
  fullRunVsExec: { runMs: ms(55, 60, 75), execMs: ms(48, 52, 53), ratio: ms(1.05, 1.15, 1.4) },
};

/** Attributes of every `<tag …>` of `svg` whose class is `className`. */
function elements(svg, tag, className) {
  return [...svg.matchAll(new RegExp(`<${tag} class="${className}"([^>]*)>`, 'g'))].map(([, attrs]) =>
    Object.fromEntries([...attrs.matchAll(/([\w-]+)="([^"]*)"/g)].map(([, k, v]) => [k, v])),
  );
}

/** The `<g class="comparison">…</g>` groups of `svg`, as `{ id, body }`. */
function groups(svg) {
  return [...svg.matchAll(/<g class="comparison" data-id="([^"]+)">([\s\S]*?)<\/g>/g)].map(([, id, body]) => ({
    id,
    body,
  }));
}

test('the chart has one bar group per comparison, in order, an unmeasured one saying why', () => {
  const items = comparisons(FIGURES);
  const svg = renderChart(items, { caption: 'commit abc1234, load 0.5 0.4 0.3' });
  assert.match(svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"[^>]*viewBox="0 0 \d+ \d+"/);
  assert.deepEqual(
    groups(svg).map((g) => g.id),
    items.map((c) => c.id),
  );
  assert.equal(items.length, 2 + 7 + 1, 'two warm rows, the seven SDK rows of the one delay given, the full Run');
  assert.equal(
    items.filter((c) => c.na === 'not in this run').length,
    4,
    'an SDK row missing from the figures says so',
  );
  const unmeasured = groups(svg).find((g) => g.id === 'pooledVsSnapshot@25ms');
  assert.match(unmeasured.body, /n\/a \(configureSandbox refuses warmPool here\)/);
  assert.doesNotMatch(unmeasured.body, /class="(bar|whisker)"/);
  const measured = new Set(items.filter((c) => !c.na).map((c) => c.id));
  assert.equal(measured.size, 5);
  for (const g of groups(svg).filter((group) => measured.has(group.id))) {
    assert.equal(elements(g.body, 'rect', 'bar').length, 2, `${g.id}: two bars`);
    assert.equal(elements(g.body, 'line', 'whisker').length, 2, `${g.id}: two whiskers`);
  }
  assert.match(svg, /commit abc1234, load 0\.5 0\.4 0\.3/);
  assert.match(svg, /ratio 0\.12 \([^)]*target ≤ 0\.5\)/, "the pooled row's ratio of medians with its target");
});

test('whiskers run from min to max, bars end at the median, all on one linear scale', () => {
  const items = comparisons(FIGURES).filter((c) => !c.na);
  const svg = renderChart(items, { caption: '' });
  // Every drawn end, as [value in ms, x in px].
  const points = [];
  for (const [index, g] of groups(svg).entries()) {
    const c = items[index];
    const bars = elements(g.body, 'rect', 'bar');
    const whiskers = elements(g.body, 'line', 'whisker');
    for (const side of ['a', 'b']) {
      const bar = bars.find((b) => b['data-side'] === side);
      const whisker = whiskers.find((w) => w['data-side'] === side);
      assert.equal(whisker.y1, whisker.y2, `${c.id} ${side}: the whisker is level`);
      points.push([0, Number(bar.x)], [c[side].median, Number(bar.x) + Number(bar.width)]);
      points.push([c[side].min, Number(whisker.x1)], [c[side].max, Number(whisker.x2)]);
    }
  }
  const [v0, x0] = points.find(([value]) => value === 0);
  const [v1, x1] = points.find(([value]) => value === 1000);
  const pxPerMs = (x1 - x0) / (v1 - v0);
  assert.ok(pxPerMs > 0, 'larger values lie further right');
  for (const [value, x] of points)
    assert.ok(Math.abs(x0 + value * pxPerMs - x) <= 0.15, `${value} ms drawn at ${x}, not ${x0 + value * pxPerMs}`);
});

test('text from the figures is escaped', () => {
  const svg = renderChart([{ id: 'x', title: 'a <b> & "c"', labels: ['p', 'q'], na: 'why <not>' }], {
    caption: '1 < 2',
  });
  assert.match(svg, /a &lt;b&gt; &amp; &quot;c&quot;/);
  assert.match(svg, /why &lt;not&gt;/);
  assert.doesNotMatch(svg, /<b>|<not>/);
});
