// Checks that a bench JSON file holds every figure of issues 12, 25 and 34, in its shape: a measurement
// (min / median / max of n) or an explained n/a. The values are the bench's business (it prints
// them, never asserts them): this is the smoke check scripts/test.sh runs after
// `node scripts/bench.mjs --quick --out FILE`.
//
// Usage: node scripts/bench-check.mjs FILE [--full]   exit 0 when every figure is there; else 1,
// naming the first one missing or malformed. `--full`: a full run (all concurrency points).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** A figure is min/median/max of n samples, or `{ na: '<why>' }`. */
function checkFigure(value, where) {
  assert.equal(typeof value, 'object', `${where} is an object`);
  if ('na' in value) {
    assert.ok(typeof value.na === 'string' && value.na.length > 10, `${where}: n/a says why`);
    return;
  }
  for (const key of ['min', 'median', 'max', 'n']) assert.equal(typeof value[key], 'number', `${where}.${key}`);
  assert.ok(value.min <= value.median && value.median <= value.max, `${where}: min ≤ median ≤ max`);
}

/** A comparison: `{ a, b, ratio }` figures, or `{ na: '<why>' }`. */
function checkPair(pair, where) {
  if ('na' in pair) checkFigure(pair, where);
  else for (const side of ['a', 'b', 'ratio']) checkFigure(pair[side], `${where}.${side}`);
}

/**
 * Throws an AssertionError naming the first figure of `figures` (the bench's JSON, parsed) that is
 * missing or malformed. `quick`: the file must come from `--quick` (two concurrency points).
 */
export function checkFigures(figures, { quick = true } = {}) {
  assert.deepEqual(Object.keys(figures).sort(), [
    'compile',
    'concurrency',
    'firstRun',
    'fullRunVsExec',
    'import',
    'install',
    'machine',
    'method',
    'requests',
    'sdkFlow',
    'sdkFlowParkedOff',
    'servers',
    'warmVsBare',
    'wasm',
    'workers',
  ]);
  for (const key of ['nproc', 'cpu', 'node', 'isolation', 'date', 'commit'])
    assert.ok(key in figures.machine, `machine.${key}`);
  for (const key of ['loadAverage', 'loadAverageAtEnd']) assert.equal(figures.machine[key].length, 3, `machine.${key}`);
  for (const key of ['clock', 'settle']) assert.equal(typeof figures.method[key], 'string', `method.${key}`);
  assert.equal(figures.machine.quick, quick, 'machine.quick');
  for (const module of ['runtime', 'tooling']) {
    assert.ok(figures.wasm[module].bytes > figures.wasm[module].gzipBytes, `wasm.${module}`);
  }
  if ('na' in figures.compile) checkFigure(figures.compile, 'compile');
  else for (const key of ['cpuMs', 'wallMs', 'instanceCpuMs']) checkFigure(figures.compile[key], `compile.${key}`);
  for (const key of ['repository', 'minimalJs', 'handWritten']) {
    const size = figures.workers.sizes[key];
    if ('na' in size) checkFigure(size, `workers.sizes.${key}`);
    else
      assert.ok(
        size.gzipKiB > 0 && (size.changeKiB === null || typeof size.changeKiB === 'number'),
        `workers.sizes.${key}: gzipKiB and its change`,
      );
    checkFigure(figures.workers.startup[key], `workers.startup.${key}`);
    if (key !== 'handWritten')
      checkFigure(figures.workers.startup.differenceMs[key], `workers.startup.differenceMs.${key}`);
  }
  assert.ok(!('na' in figures.workers.sizes.minimalJs), 'the minimal JS Worker is measured in every run');
  assert.equal(typeof figures.workers.startup.method, 'string', 'workers.startup.method');
  assert.ok(figures.install.nodeModulesBytes > 0 && figures.install.tarballBytes > 0, 'install sizes');

  checkFigure(figures.import.ms, 'import.ms');
  checkFigure(figures.import.loaderStartMs, 'import.loaderStartMs');
  for (const key of ['firstMs', 'secondMs', 'firstOverSecond', 'hostMs', 'connectMs', 'exitMs'])
    checkFigure(figures.firstRun.cold[key], `firstRun.cold.${key}`);
  const warm = figures.firstRun.afterWarmUp;
  for (const key of ['warmUpMs', 'firstMs', 'secondMs', 'firstOverSecond', 'exitMs'])
    checkFigure(warm[key], `firstRun.afterWarmUp.${key}`);

  for (const kind of ['built', 'dev']) {
    for (const key of ['firstRequestMs', 'secondRequestMs', 'firstRunMs', 'secondRunMs', 'firstOverSecondRun'])
      checkFigure(figures.servers[kind][key], `servers.${kind}.${key}`);
    assert.ok(Number.isInteger(figures.servers[kind].firstUsePhases), `servers.${kind}.firstUsePhases`);
  }
  for (const key of ['listenToFirst200Ms', 'attempts'])
    checkFigure(figures.servers.devListening[key], `servers.devListening.${key}`);

  for (const key of ['coldNoDeps', 'preparedNoDeps', 'coldWithDeps', 'preparedWithDeps']) {
    const counted = figures.requests[key];
    assert.ok(
      counted.na || (Number.isInteger(counted.beforeResponse) && Number.isInteger(counted.total)),
      `requests.${key}`,
    );
  }
  for (const key of ['sdkFlowNoDeps', 'sdkFlowWithDeps'])
    assert.ok(Number.isInteger(figures.requests[key].total), `requests.${key}`);
  const pooled = figures.requests.pooledWithDeps;
  if ('na' in pooled) checkFigure(pooled, 'requests.pooledWithDeps');
  else
    assert.ok(
      Number.isInteger(pooled.beforeResponse) && pooled.createsBeforeResponse === 0,
      'requests.pooledWithDeps: counted, and took a pooled Box',
    );

  for (const hostKey of ['sdkFlow', 'sdkFlowParkedOff']) {
    assert.deepEqual(
      Object.keys(figures[hostKey]),
      quick ? ['delay25ms'] : ['delay25ms', 'delay0ms'],
      `${hostKey}: the delays of a ${quick ? 'quick' : 'full'} run`,
    );
    for (const delay of Object.keys(figures[hostKey])) {
      for (const scenario of [
        'coldNoDeps',
        'preparedNoDeps',
        'coldWithDeps',
        'preparedWithDeps',
        'preparedVsSnapshot',
        'pooledWithDeps',
        'pooledVsSnapshot',
      ]) {
        checkPair(figures[hostKey][delay][scenario], `${hostKey}.${delay}.${scenario}`);
      }
    }
  }

  const bare = figures.warmVsBare;
  for (const key of [
    'runMs',
    'parkedOffRunMs',
    'prestartedMs',
    'prestartedRatio',
    'parkedOffPrestartedRatio',
    'bareNodeMs',
    'ratio',
    'parkedOffRatio',
    'gain',
  ])
    checkFigure(bare[key], `warmVsBare.${key}`);
  assert.ok(
    typeof bare.parking === 'object' &&
      [true, false, null].includes(bare.parking.inEffect) &&
      bare.parking.how.length > 10,
    'warmVsBare.parking says whether parking was seen, and how',
  );
  if ('na' in bare.harness) checkFigure(bare.harness, 'warmVsBare.harness');
  else
    for (const key of ['harnessMs', 'runnerMs', 'ratio']) checkFigure(bare.harness[key], `warmVsBare.harness.${key}`);
  if ('na' in bare.backToBack) checkFigure(bare.backToBack, 'warmVsBare.backToBack');
  else
    for (const key of ['parkedMs', 'parkedOffMs', 'ratio'])
      checkFigure(bare.backToBack[key], `warmVsBare.backToBack.${key}`);
  for (const key of ['runMs', 'execMs', 'ratio']) checkFigure(figures.fullRunVsExec[key], `fullRunVsExec.${key}`);
  assert.ok(figures.concurrency.holdMs > 0, 'concurrency.holdMs');
  assert.deepEqual(Object.keys(figures.concurrency.levels), quick ? ['1', '8'] : ['1', '8', '32', '128']);
  for (const [n, point] of Object.entries(figures.concurrency.levels)) {
    assert.ok(
      Number.isInteger(point.failures) && point.ok + point.failures === Number(n) && point.wallMs > 0,
      `concurrency.levels.${n}: answered and failed add up to ${n}, with a wall time`,
    );
    checkFigure(point.latencyMs, `concurrency.levels.${n}.latencyMs`);
    if (point.ok > 0) assert.ok(point.p50Ms <= point.p99Ms, `concurrency.levels.${n}: p50 ≤ p99`);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [file, ...rest] = process.argv.slice(2);
  if (!file) {
    console.error('usage: node scripts/bench-check.mjs FILE [--full]');
    process.exit(2);
  }
  try {
    checkFigures(JSON.parse(readFileSync(file, 'utf8')), { quick: !rest.includes('--full') });
  } catch (error) {
    console.error(`bench-check: ${file}: ${error.message}`);
    process.exit(1);
  }
  console.log(`bench-check: ${file} holds every figure`);
}
