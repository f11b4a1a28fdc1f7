// The app's network settings for package installs: the CA files and proxies the app's own Node
// and npm use (its process environment), which a Box's commands get so that an install in a Box
// reaches the registry the same way an install on this machine does (behind a corporate proxy
// that re-signs TLS, without them every install fails with SELF_SIGNED_CERT_IN_CHAIN). npm's
// config files are box-toolchain.mjs's (publicNpmConfig); this module reads the environment.
//
// Only an allowlist of variables is read, so no token, password or other secret of the app's
// environment reaches a Box: a proxy URL with user info (`http://user:pass@proxy`) is left out
// too. Sources: Node's NODE_EXTRA_CA_CERTS (nodejs.org/api/cli.html); npm's `npm_config_<key>`
// environment (any case; `-` written `_`) and its defaults of `proxy`, `https-proxy` and
// `noproxy` from HTTP_PROXY, HTTPS_PROXY and NO_PROXY (docs.npmjs.com "config"); pnpm reads the
// same; Yarn Berry's YARN_HTTP_PROXY, YARN_HTTPS_PROXY and YARN_CA_FILE_PATH (yarnpkg.com
// "configuration/yarnrc").
import fs from 'node:fs';
import path from 'node:path';

/** Proxy variables passed on as the app has them (both spellings are in use). */
const PROXY_VARIABLES = [
  'HTTPS_PROXY',
  'https_proxy',
  'HTTP_PROXY',
  'http_proxy',
  'NO_PROXY',
  'no_proxy',
  'YARN_HTTP_PROXY',
  'YARN_HTTPS_PROXY',
];

/** npm config keys (as npm reads them from `npm_config_<key>`) a Box's installs get. */
const NPM_KEYS = ['ca', 'cafile', 'proxy', 'https_proxy', 'noproxy', 'registry', 'strict_ssl'];

/** Variables whose value names a CA file: the file is shown to the Box (read-only). */
export const CA_FILE_VARIABLES = ['NODE_EXTRA_CA_CERTS', 'npm_config_cafile', 'YARN_CA_FILE_PATH'];

/** Whether a URL-like value carries user info (`scheme://user[:pass]@host`): a credential. */
function carriesUserInfo(value) {
  return /^[a-z][a-z0-9+.-]*:\/\/[^/\s@]*@/i.test(value.trim());
}

/** A readable regular file's `{ file (real path), data }`, or null. */
function readCaFile(named) {
  if (!path.isAbsolute(named)) return null;
  try {
    const file = fs.realpathSync(named);
    if (!fs.statSync(file).isFile()) return null;
    return { file, data: fs.readFileSync(file, 'utf8') };
  } catch {
    return null;
  }
}

/**
 * The app's CA and proxy settings from its environment `env` (default `process.env`): `{ env
 * (the variables a Box command gets, values as the app has them: a CA file by the path the app
 * names), caFiles ([{ named, file (real path), data }]: the CA files those variables name, read
 * now) }`. npm's variables come out as `npm_config_<key>` (lower case) whichever case the app
 * wrote. A CA file that cannot be read is left out with its variable (Node would warn on every
 * command otherwise); a proxy value with user info is left out (a password).
 */
export function installNetwork(env = process.env) {
  const out = {};
  for (const name of PROXY_VARIABLES) {
    const value = env[name];
    if (typeof value === 'string' && value !== '' && !carriesUserInfo(value)) out[name] = value;
  }
  for (const [name, value] of Object.entries(env)) {
    const match = /^npm_config_(.+)$/i.exec(name);
    if (!match || typeof value !== 'string' || value === '') continue;
    const key = match[1].toLowerCase().replaceAll('-', '_');
    const variable = `npm_config_${key}`;
    if (!NPM_KEYS.includes(key) || variable in out || carriesUserInfo(value)) continue;
    out[variable] = value;
  }
  for (const name of ['NODE_EXTRA_CA_CERTS', 'YARN_CA_FILE_PATH']) {
    if (typeof env[name] === 'string' && env[name] !== '') out[name] = env[name];
  }
  const caFiles = [];
  for (const name of CA_FILE_VARIABLES) {
    if (out[name] === undefined) continue;
    const ca = readCaFile(out[name]);
    if (ca === null) {
      delete out[name];
      continue;
    }
    caFiles.push({ named: out[name], ...ca });
  }
  return { env: out, caFiles };
}

/**
 * The variables of `network` (installNetwork) as a Box command gets them, each CA file named by
 * `shown(named)`: where the Box sees it (a bubblewrap Box shows it at its own path or below the
 * toolchain root; a plain process reads the host's file).
 */
export function installNetworkEnv(network, shown = (named) => named) {
  if (!network) return {};
  const env = { ...network.env };
  for (const name of CA_FILE_VARIABLES) if (env[name] !== undefined) env[name] = shown(env[name]);
  return env;
}
