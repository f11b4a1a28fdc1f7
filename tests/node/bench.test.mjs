// scripts/bench.mjs --quick runs to the end and writes every figure of issue 12 into its JSON file.
// The figures' values are the bench's business (it prints them, never asserts them): this checks
// only that each one is there, as a measurement (min / median / max) or as an explained n/a.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from './vite-app.mjs';

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'vite-hub-bench-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A figure is min/median/max of n samples, or `{ na: '<why>' }`. */
function assertFigure(value, where) {
  assert.equal(typeof value, 'object', `${where} is an object`);
  if ('na' in value) {
    assert.ok(typeof value.na === 'string' && value.na.length > 10, `${where}: n/a says why`);
    return;
  }
  for (const key of ['min', 'median', 'max', 'n']) assert.equal(typeof value[key], 'number', `${where}.${key}`);
  assert.ok(value.min <= value.median && value.median <= value.max, `${where}: min ≤ median ≤ max`);
}

test('bench --quick writes every figure', { timeout: 900_000 }, async () => {
  const out = join(dir, 'figures.json');
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: tmpdir() };
  const { stdout } = await run(process.execPath, ['scripts/bench.mjs', '--quick', '--out', out], { cwd: repoRoot, env, timeout: 900_000, maxBuffer: 16 << 20 });
  assert.match(stdout, /wrote /);
  const figures = JSON.parse(readFileSync(out, 'utf8'));

  assert.deepEqual(Object.keys(figures).sort(), ['concurrency', 'firstRun', 'import', 'install', 'machine', 'requests', 'sdkFlow', 'servers', 'warmVsBare', 'wasm']);
  for (const key of ['nproc', 'cpu', 'node', 'isolation', 'date']) assert.ok(key in figures.machine, `machine.${key}`);
  assert.equal(figures.machine.quick, true);
  for (const module of ['runtime', 'tooling']) {
    assert.ok(figures.wasm[module].bytes > figures.wasm[module].gzipBytes, `wasm.${module}`);
  }
  assert.ok(figures.install.nodeModulesBytes > 0 && figures.install.tarballBytes > 0, 'install sizes');

  assertFigure(figures.import.ms, 'import.ms');
  assertFigure(figures.import.loaderStartMs, 'import.loaderStartMs');
  for (const key of ['firstMs', 'secondMs', 'firstOverSecond', 'hostMs', 'connectMs']) assertFigure(figures.firstRun.cold[key], `firstRun.cold.${key}`);
  const warm = figures.firstRun.afterWarmUp;
  for (const key of ['warmUpMs', 'firstMs', 'secondMs', 'firstOverSecond']) assertFigure(warm[key], `firstRun.afterWarmUp.${key}`);

  for (const kind of ['built', 'dev']) {
    for (const key of ['firstRequestMs', 'secondRequestMs', 'firstRunMs', 'secondRunMs', 'firstOverSecondRun']) assertFigure(figures.servers[kind][key], `servers.${kind}.${key}`);
    assert.ok(Number.isInteger(figures.servers[kind].firstUsePhases), `servers.${kind}.firstUsePhases`);
  }

  for (const key of ['coldNoDeps', 'preparedNoDeps', 'coldWithDeps', 'preparedWithDeps']) {
    const counted = figures.requests[key];
    assert.ok(counted.na || (Number.isInteger(counted.beforeResponse) && Number.isInteger(counted.total)), `requests.${key}`);
  }
  for (const key of ['sdkFlowNoDeps', 'sdkFlowWithDeps']) assert.ok(Number.isInteger(figures.requests[key].total), `requests.${key}`);

  for (const delay of ['delay25ms', 'delay0ms']) {
    for (const scenario of ['coldNoDeps', 'preparedNoDeps', 'coldWithDeps', 'preparedWithDeps']) {
      const pair = figures.sdkFlow[delay][scenario];
      if ('na' in pair) assertFigure(pair, `sdkFlow.${delay}.${scenario}`);
      else for (const side of ['a', 'b', 'ratio']) assertFigure(pair[side], `sdkFlow.${delay}.${scenario}.${side}`);
    }
  }

  for (const key of ['runSandboxMs', 'bareNodeMs', 'ratio']) assertFigure(figures.warmVsBare[key], `warmVsBare.${key}`);
  for (const key of ['harnessMs', 'runnerMs', 'ratio']) assertFigure(figures.warmVsBare.harness[key], `warmVsBare.harness.${key}`);
  assert.deepEqual(Object.keys(figures.concurrency), ['1', '8']);
  for (const point of Object.values(figures.concurrency)) {
    assert.ok(Number.isInteger(point.failures) && point.wallMs > 0, 'a concurrency point has failures and wall time');
  }
});
