// The bench's chart (scripts/bench-chart.mjs, docs/benchmarks.svg): from a bench's figures, one
// bar group per comparison of scripts/bench-comparisons.mjs, each side's bar ending at its median
// and its whisker running from its min to its max on one linear scale; a comparison that could not
// be measured keeps its group and says why. Below them, the panels of single figures (sizes,
// startup CPU, concurrency), each on a scale of its own with its target line; the page
// (bench-docs.mjs) says met / not met beside each target.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderChart } from '../../scripts/bench-chart.mjs';
import { comparisons, panels } from '../../scripts/bench-comparisons.mjs';
import { renderBenchmarks } from '../../scripts/bench-docs.mjs';

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
    prestartedMs: ms(9, 12, 15),
    prestartedRatio: ms(2.3, 2.8, 3.4),
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
  assert.equal(
    items.length,
    3 + 7 + 1,
    'three warm rows (pre-started, bare, bare with parking off), the seven SDK rows of the one delay and host given, the full Run',
  );
  assert.equal(
    items.filter((c) => c.na === 'not in this run').length,
    4,
    'an SDK row missing from the figures says so',
  );
  const unmeasured = groups(svg).find((g) => g.id === 'pooledVsSnapshot@25ms');
  assert.match(unmeasured.body, /n\/a \(configureSandbox refuses warmPool here\)/);
  assert.doesNotMatch(unmeasured.body, /class="(bar|whisker)"/);
  const measured = new Set(items.filter((c) => !c.na).map((c) => c.id));
  assert.equal(measured.size, 6);
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

const PANEL_FIGURES = {
  wasm: { runtime: { bytes: 600_000, gzipBytes: 250_000, changeGzipBytes: -1024 } },
  workers: {
    sizes: {
      repository: { gzipKiB: 420.5, changeKiB: 2 },
      minimalJs: { na: 'wrangler deploy --dry-run failed: no wrangler here' },
      handWritten: { gzipKiB: 134.3, changeKiB: null },
    },
    startup: {
      method: 'the profile',
      repository: ms(10, 12, 20),
      minimalJs: { na: 'wrangler deploy --dry-run failed: no wrangler here' },
      handWritten: ms(3, 4, 6),
      differenceMs: {
        repository: ms(6, 8, 15),
        minimalJs: { na: 'wrangler deploy --dry-run failed: no wrangler here' },
      },
    },
  },
  compile: {
    method: 'the compile',
    bytes: 600_000,
    cpuMs: ms(16, 18, 21),
    wallMs: ms(5, 6, 7),
    instanceCpuMs: ms(1, 1, 2),
  },
  concurrency: {
    holdMs: 5000,
    levels: {
      8: {
        ok: 8,
        failures: 0,
        failureCounts: {},
        p50Ms: 5100,
        p99Ms: 5400,
        latencyMs: ms(5050, 5100, 5400),
        wallMs: 5400,
        wallMsPerRun: 675,
      },
      128: {
        ok: 60,
        failures: 68,
        failureCounts: { '503 SANDBOX_PROVIDER_UNAVAILABLE': 68 },
        p50Ms: 31000,
        p99Ms: 59000,
        latencyMs: ms(5100, 31000, 59100),
        wallMs: 61000,
        wallMsPerRun: 476.6,
      },
    },
  },
};

test('the panels draw each figure on a scale of their own, with the target line and an n/a that says why', () => {
  const list = panels(PANEL_FIGURES);
  assert.deepEqual(
    list.map((p) => p.id),
    ['startup', 'sizes', 'compile', 'concurrency'],
  );
  const svg = renderChart([], { caption: '', panels: list });
  const drawn = [...svg.matchAll(/<g class="panel" data-id="([^"]+)">([\s\S]*?)<\/g>/g)].map(([, id, body]) => ({
    id,
    body,
  }));
  assert.deepEqual(
    drawn.map((p) => p.id),
    list.map((p) => p.id),
  );
  const sizes = drawn.find((p) => p.id === 'sizes').body;
  // runtime wasm, the repository's and the hand-written Worker drawn; the minimal one says why not.
  assert.equal(elements(sizes, 'rect', 'panel-bar').length, 3);
  assert.match(sizes, /n\/a \(wrangler deploy --dry-run failed: no wrangler here\)/);
  assert.match(sizes, /-1\.0 KiB since the last bench/);
  // The budget line lies where 600 KiB lies on the bars' scale: 0 at the bars' x, 244.1 KiB at a bar's end.
  const [limit] = elements(sizes, 'line', 'limit');
  const bars = elements(sizes, 'rect', 'panel-bar');
  const runtime = bars[0];
  const pxPerKiB = Number(runtime.width) / (Math.round((250_000 / 1024) * 10) / 10);
  assert.ok(Math.abs(Number(runtime.x) + 600 * pxPerKiB - Number(limit.x1)) <= 0.2, 'the budget line at 600 KiB');
  const concurrency = drawn.find((p) => p.id === 'concurrency').body;
  assert.equal(elements(concurrency, 'rect', 'panel-bar').length, 4, 'p50 and p99 of each level');
  assert.match(concurrency, /68 failed, 1016\.7 ms wall\/answered Run/);
  const startup = drawn.find((p) => p.id === 'startup').body;
  assert.equal(elements(startup, 'line', 'panel-whisker').length, 2, 'a whisker for each figure of several runs');
});

test('the page says met or not met beside each target of issue 34', () => {
  const page = renderBenchmarks({
    ...PANEL_FIGURES,
    machine: {
      commit: 'abc1234',
      date: '2026-12-06T00:00:00Z',
      quick: false,
      cpu: 'x',
      nproc: 2,
      node: 'v20',
      platform: 'linux',
      isolation: 'bubblewrap',
      loadAverage: [1, 1, 1],
      loadAverageAtEnd: [1, 1, 1],
    },
    method: { clock: 'c', settle: 's' },
    install: { nodeModulesBytes: 1, tarballBytes: 1, packages: 1 },
    import: { ms: ms(1, 2, 3), loaderStartMs: ms(1, 2, 3) },
    firstRun: { cold: {}, afterWarmUp: { na: 'this build exports no warmUp()' } },
    servers: { devListening: { listenToFirst200Ms: ms(1100, 1300, 1800), attempts: ms(1, 1, 1) } },
    requests: {},
    warmVsBare: { ...FIGURES.warmVsBare, isolation: 'bubblewrap', harness: { na: 'the harness failed here, say' } },
    sdkFlow: FIGURES.sdkFlow,
    fullRunVsExec: FIGURES.fullRunVsExec,
  });
  assert.match(page, /default \/ pre-started \(target ≤ 2: not met\) \| 2\.30 \| 2\.80 \| 3\.40 \| 5 \|/);
  assert.match(page, /compile CPU \(ms; target ≤ 15 ms: not met\) \| 16\.00 \| 18\.00 \| 21\.00 \| 5 \|/);
  assert.match(
    page,
    /minus the hand-written one, per round \(target ≤ 100 ms: met\) \| 6\.00 \| 8\.00 \| 15\.00 \| 5 \|/,
  );
  assert.match(page, /\| the repository's Worker \(Rust\) \| 420\.5 KiB \| \+2 KiB \| target ≤ 600 KiB: met \|/);
  assert.match(page, /- 128 at once: 68 failed; target 0 failures: not met/);
  // 61000 ms / 60 answered at 128, 5400 / 8 at 8: per answered Run, and not met while any failed.
  assert.match(
    page,
    /- wall time per answered Run at 128 \(1016\.7 ms\) no worse than at 8 \(675 ms\) and none failed \(68 did\): not met/,
  );
  assert.match(page, /port accepting → first 200 \(ms\) \| 1100 \| 1300 \| 1800 \| 5 \|/);
});
