// Module hooks of load-recorder.mjs (they run on Node's loader thread): appends `module:<url>`
// for every resolved import to the log file.
import { appendFileSync } from 'node:fs';

let log;
export function initialize(data) {
  log = data.log;
}

export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  appendFileSync(log, `module:${result.url}\n`);
  return result;
}
