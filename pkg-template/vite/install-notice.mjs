// The one line `vite dev` and `vite-hub-sandbox run` print after a Run whose install lasted over a
// second: which manager installed how many packages, and how long it took (the `install` phase of
// the Response's Server-Timing, src/run/timing.rs). No imports, and installDuration/installNotice
// use nothing outside themselves but INSTALL_NOTICE_MS: generate.mjs copies their source into the
// dev facade.

/** Installs shorter than this (ms) print nothing. */
export const INSTALL_NOTICE_MS = 1000;

const DEPENDENCY_FIELDS = ['dependencies', 'devDependencies', 'optionalDependencies', 'peerDependencies'];

/**
 * The `install` phase of a Response's Server-Timing, in ms; `null` when the Run installed nothing.
 * @param {Response} response
 */
export function installDuration(response) {
  const timing = response?.headers?.get?.('server-timing') ?? '';
  const match = /(?:^|,)\s*install;(?:desc="[^"]*";)?dur=([\d.]+)/.exec(timing);
  return match ? Number(match[1]) : null;
}

/**
 * What a Definition installs: `{ manager, packages }` (the chosen manager, the number of packages
 * its package.json declares), or `null` when it installs nothing.
 * @param {{ files: Array<{ path: string, content: string | Uint8Array, encoding?: string }>, packagePath?: string }} definition the prepared Definition
 * @param {{ packageManager: string, install: object | null }} summary what registerSandbox / validateSandboxDefinition answered
 */
export function installFacts(definition, summary) {
  if (!summary?.install) return null;
  const manifestPath = definition.packagePath ? `${definition.packagePath}/package.json` : 'package.json';
  const file = definition.files.find((item) => item.path === manifestPath);
  let packages = 0;
  try {
    const text =
      typeof file.content !== 'string'
        ? new TextDecoder().decode(file.content)
        : file.encoding === 'base64'
          ? Buffer.from(file.content, 'base64').toString('utf8')
          : file.content;
    const manifest = JSON.parse(text.replace(/^\uFEFF/, ''));
    packages = new Set(DEPENDENCY_FIELDS.flatMap((field) => Object.keys(manifest[field] ?? {}))).size;
  } catch {
    // The core validated the manifest; a count it cannot give is left out of the line.
    packages = null;
  }
  return { manager: summary.install.command ?? summary.packageManager, packages };
}

/**
 * The line for a Run of `name`, or `null` when its install took under {@link INSTALL_NOTICE_MS}; for
 * a Response that is not ok it says the Run failed instead of that the packages were installed.
 * @param {string} name
 * @param {Response} response
 * @param {{ manager: string, packages: number | null } | null | undefined} facts from {@link installFacts}
 */
export function installNotice(name, response, facts) {
  const ms = installDuration(response);
  if (ms === null || ms < INSTALL_NOTICE_MS) return null;
  const count = facts?.packages ?? null;
  const what = count === null ? 'dependencies' : `${count} package${count === 1 ? '' : 's'}`;
  const manager = facts?.manager ? ` with ${facts.manager}` : '';
  const seconds = (ms / 1000).toFixed(1);
  // A Run that failed (its install, SANDBOX_EXECUTION_ERROR, or what ran after it) never reads
  // as a finished install: its error says which.
  if (response?.ok === false)
    return `[sandbox] ${name}: the install of ${what}${manager} in the Box took ${seconds} s and the Run failed (see its error)`;
  return `[sandbox] ${name}: installed ${what}${manager} in the Box in ${seconds} s`;
}
