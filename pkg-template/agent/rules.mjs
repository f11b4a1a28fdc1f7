// The rules of `sandbox({ commands, env })` and of one `sandbox_exec` input, in the order of
// vitehub-sandbox-contract.md §7 (plus env names opt-in, which the contract has not), and the
// tool's description and JSON Schema. Pure: no Session, no Box, no I/O, so a refused input
// provably never reaches one.
//
// What they cannot do: stop an allowed executable from running others through its own options
// (`node -e`, `find -exec`, `git -c alias.x=!cmd`, `tar --checkpoint-action`). The allow-list
// narrows what the model asks for; the Box is the security boundary (docs/agent-tool.md).
//
// JS, not Rust: only the apps that import `@vite-hub/sandbox/agent` load these rules, not every
// runtime that loads the wasm, and `sandbox()` needs no wasm initialised. docs/agent-tool.md,
// "Where it lives", says the same.
import { invalidArgument } from '../runtime/sandbox-error.mjs';

/** At most this many `args`. */
export const MAX_ARGS = 128;
/** At most this many characters (UTF-16 code units, JS `length`) in one argument or env value. */
export const MAX_TEXT_CHARS = 32_768;
/** At most this many `env` entries in one input. */
export const MAX_ENV_ENTRIES = 64;
/** Largest `timeout`, in ms (the largest delay a JS timer accepts). */
export const MAX_TIMEOUT_MS = 2_147_483_647;
const COMMAND_PATTERN = /^[A-Za-z0-9_.-]+$/;
const ENV_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;
/**
 * Loader and interpreter hooks: env names that make a program load or run code other than the
 * command the agent named: the dynamic loader's preload and search paths and glibc's module
 * paths and tunables; the command search path; the start-up files, options and prompt hooks of
 * sh and bash; the options and module paths of Node, npm (its prefix too: `$PREFIX/etc/npmrc`
 * names the shell of its scripts), Python, Perl, Ruby, PHP, Lua and Java; OpenSSL's config and
 * module paths (a config loads a library);
 * git's config, hooks and helper commands; tar's default options; the pager, editor and input
 * filter programs other tools start. A name, or a prefix ending in `*`; compared upper-cased. No
 * `sandbox({ env })` may allow one and no `sandbox_exec` input may set one. Not exhaustive: an
 * allowed name is the app's choice (docs/agent-tool.md).
 */
export const BLOCKED_ENV_NAMES = Object.freeze([
  'PATH',
  'ENV',
  'BASH_ENV',
  'SHELLOPTS',
  'BASHOPTS',
  'PS4',
  'PROMPT_COMMAND',
  'NODE_OPTIONS',
  'NODE_PATH',
  'NODE_REPL_EXTERNAL_MODULE',
  'PERLLIB',
  'PHPRC',
  'PHP_INI_SCAN_DIR',
  'GCONV_PATH',
  'LOCPATH',
  'GLIBC_TUNABLES',
  'JAVA_TOOL_OPTIONS',
  '_JAVA_OPTIONS',
  'JDK_JAVA_OPTIONS',
  'TAR_OPTIONS',
  'LESSOPEN',
  'LESSCLOSE',
  'PAGER',
  'EDITOR',
  'VISUAL',
  'PREFIX',
  'LD_*',
  'DYLD_*',
  'PYTHON*',
  'GIT_*',
  'PERL5*',
  'RUBY*',
  'NPM_CONFIG_*',
  'LUA_INIT*',
  'OPENSSL_*',
]);
/** How a refusal names the hooks: the exported list, not its 33 entries. */
const HOOKS_TEXT = 'BLOCKED_ENV_NAMES of @vite-hub/sandbox/agent, in any case';
const INPUT_KEYS = ['command', 'args', 'cwd', 'env', 'timeout'];

/** `text` quoted for a message, cut to 128 characters. */
function quoted(text) {
  const chars = Array.from(text);
  return chars.length > 128 ? `"${chars.slice(0, 128).join('')}…"` : `"${text}"`;
}

/** `object[key]`; a getter or Proxy trap that throws is a refused input naming `what`. */
function read(object, key, what) {
  try {
    return object[key];
  } catch (error) {
    throw invalidArgument(`${what} could not be read: ${error?.message ?? String(error)}`, error);
  }
}

/** The own enumerable string keys of `object` (what `Object.keys` gives), guarded like `read`. */
function keysOf(object, what) {
  try {
    return Object.keys(object);
  } catch (error) {
    throw invalidArgument(`${what} could not be read: ${error?.message ?? String(error)}`, error);
  }
}

/**
 * Checks `sandbox({ commands })`; returns a frozen copy of the names.
 * @throws SandboxError `SANDBOX_INVALID_ARGUMENT`: not a non-empty array ("requires at least one
 *   executable name"), or an entry that is not a string matching `^[A-Za-z0-9_.-]+$` ("accepts
 *   executable names only, not shell command strings").
 */
export function checkCommands(commands) {
  if (!Array.isArray(commands) || read(commands, 'length', 'sandbox({ commands })') === 0) {
    throw invalidArgument(
      "sandbox({ commands }) requires at least one executable name, e.g. sandbox({ commands: ['node'] })",
    );
  }
  const names = [];
  const length = read(commands, 'length', 'sandbox({ commands })');
  for (let index = 0; index < length; index++) {
    const name = read(commands, index, 'sandbox({ commands })');
    if (typeof name === 'string' && COMMAND_PATTERN.test(name)) {
      names.push(name);
      continue;
    }
    const problem =
      typeof name === 'string' ? `${quoted(name)} does not match ${COMMAND_PATTERN.source}` : 'is not a string';
    throw invalidArgument(
      `sandbox({ commands }) accepts executable names only, not shell command strings: commands[${index}] ${problem} (give the executable, e.g. 'pnpm'; the agent passes its arguments in args)`,
    );
  }
  return Object.freeze(names);
}

/** Whether `name` is one of BLOCKED_ENV_NAMES, in any case (`Ld_Preload` is `LD_*`). */
export function isBlockedEnvName(name) {
  const upper = name.toUpperCase();
  return BLOCKED_ENV_NAMES.some((blocked) =>
    blocked.endsWith('*') ? upper.startsWith(blocked.slice(0, -1)) : upper === blocked,
  );
}

/**
 * Checks `sandbox({ env })`: the env names a `sandbox_exec` input may set, compared exactly (env
 * names are case-sensitive). Absent: none, so an input's `env` must be empty.
 * @returns {readonly string[]} a frozen copy without repeats; `[]` when `env` is absent
 * @throws SandboxError `SANDBOX_INVALID_ARGUMENT`: not an array, an entry that is not a string
 *   matching `^[A-Za-z_][A-Za-z0-9_]*$`, or a loader or interpreter hook (BLOCKED_ENV_NAMES, any
 *   case: "sandbox({ env }) cannot allow "LD_PRELOAD": …").
 */
export function checkEnvNames(env) {
  if (env === undefined) return Object.freeze([]);
  if (!Array.isArray(env))
    throw invalidArgument(
      "sandbox({ env }) must be an array of the env names the agent may set, e.g. sandbox({ commands: ['node'], env: ['CI'] })",
    );
  const names = [];
  const length = read(env, 'length', 'sandbox({ env })');
  for (let index = 0; index < length; index++) {
    const name = read(env, index, 'sandbox({ env })');
    if (typeof name !== 'string' || !ENV_NAME_PATTERN.test(name)) {
      const problem =
        typeof name === 'string' ? `${quoted(name)} does not match ${ENV_NAME_PATTERN.source}` : 'is not a string';
      throw invalidArgument(`sandbox({ env }) accepts env names only: env[${index}] ${problem}`);
    }
    if (isBlockedEnvName(name)) {
      throw invalidArgument(
        `sandbox({ env }) cannot allow ${quoted(name)}: loader and interpreter hooks (${HOOKS_TEXT}) are never set by sandbox_exec.`,
      );
    }
    if (!names.includes(name)) names.push(name);
  }
  return Object.freeze(names);
}

/**
 * Checks the options of `sandbox({ commands, env })`: what the agent may run and which env names
 * it may set.
 * @returns {{ commands: readonly string[], env: readonly string[] }} frozen
 * @throws SandboxError `SANDBOX_INVALID_ARGUMENT`, from checkCommands, then from checkEnvNames
 */
export function checkAllowed(options) {
  return Object.freeze({ commands: checkCommands(options?.commands), env: checkEnvNames(options?.env) });
}

/**
 * `Run one allowed executable in an isolated sandbox. Allowed commands: a, b.`, then, when env
 * names are allowed, ` Allowed env names: A, B.`
 */
export function toolDescription(allowed) {
  const commands = `Run one allowed executable in an isolated sandbox. Allowed commands: ${allowed.commands.join(', ')}.`;
  return allowed.env.length > 0 ? `${commands} Allowed env names: ${allowed.env.join(', ')}.` : commands;
}

/**
 * The tool's input JSON Schema (contract §7; draft-07 and 2020-12 read it alike), a fresh object.
 * `env` is offered only when names are allowed, as an object of exactly those optional keys
 * (`properties` and `additionalProperties: false`, which AI SDK providers and MCP clients read).
 */
export function inputJsonSchema(allowed) {
  const properties = {
    command: { type: 'string', enum: [...allowed.commands] },
    args: { type: 'array', items: { type: 'string', maxLength: MAX_TEXT_CHARS }, maxItems: MAX_ARGS },
    cwd: { type: 'string' },
  };
  if (allowed.env.length > 0) {
    properties.env = {
      type: 'object',
      maxProperties: MAX_ENV_ENTRIES,
      properties: Object.fromEntries(allowed.env.map((name) => [name, { type: 'string', maxLength: MAX_TEXT_CHARS }])),
      additionalProperties: false,
    };
  }
  properties.timeout = { type: 'integer', exclusiveMinimum: 0, maximum: MAX_TIMEOUT_MS };
  return { type: 'object', additionalProperties: false, required: ['command'], properties };
}

/**
 * Checks one `sandbox_exec` input against `allowed` (from checkAllowed), in the contract's order:
 * `command` a string; exactly one of `allowed.commands`; `args`; `cwd`; `env` (each name: the
 * pattern, not a hook, one of `allowed.env`); `timeout`; then no other key.
 * @returns {{ command: string, args: string[], options: { cwd?: string, env?: Record<string, string>, timeout?: number } }}
 *   absent options omitted; `env` a copy with a null prototype; `timeout` in ms
 * @throws SandboxError `SANDBOX_INVALID_ARGUMENT`, the message naming the first rule broken; a
 *   command off the list gives exactly `Sandbox command "<name>" is not allowed.`, an env name off
 *   the list `sandbox_exec env "<name>" is not allowed (allowed: …); …`
 */
export function checkExecInput(allowed, input) {
  const { commands } = allowed;
  const isObject = input !== null && typeof input === 'object' && !Array.isArray(input);
  const keys = isObject ? keysOf(input, 'sandbox_exec input') : [];
  const value = (key) => (keys.includes(key) ? read(input, key, `sandbox_exec ${key}`) : undefined);

  const command = value('command');
  if (typeof command !== 'string') {
    throw invalidArgument(
      `sandbox_exec requires a command: a string naming one of the allowed executables (${commands.join(', ')})`,
    );
  }
  if (!commands.includes(command)) throw invalidArgument(`Sandbox command ${quoted(command)} is not allowed.`);
  const args = checkArgs(value('args'));
  const cwd = value('cwd');
  if (cwd !== undefined && typeof cwd !== 'string') throw invalidArgument('sandbox_exec cwd must be a string.');
  const env = checkEnv(value('env'), allowed.env);
  const timeout = value('timeout');
  if (timeout !== undefined && !(Number.isInteger(timeout) && timeout > 0 && timeout <= MAX_TIMEOUT_MS)) {
    throw invalidArgument(
      `sandbox_exec timeout must be a positive integer no greater than ${MAX_TIMEOUT_MS} (milliseconds).`,
    );
  }
  const unknown = keys.find((key) => !INPUT_KEYS.includes(key));
  if (unknown !== undefined)
    throw invalidArgument(
      `sandbox_exec input has an unknown key ${quoted(unknown)}; its keys are command, args, cwd, env and timeout.`,
    );

  const options = {};
  if (cwd !== undefined) options.cwd = cwd;
  if (env !== undefined) options.env = env;
  if (timeout !== undefined) options.timeout = timeout;
  return { command, args, options };
}

function checkArgs(args) {
  const refuse = (problem) =>
    invalidArgument(
      `sandbox_exec args must be an array of no more than ${MAX_ARGS} strings, each no longer than ${MAX_TEXT_CHARS} characters (${problem}).`,
    );
  if (args === undefined) return [];
  if (!Array.isArray(args)) throw refuse('args is not an array');
  const length = read(args, 'length', 'sandbox_exec args');
  if (length > MAX_ARGS) throw refuse(`it has more than ${MAX_ARGS}`);
  const out = [];
  for (let index = 0; index < length; index++) {
    const arg = read(args, index, 'sandbox_exec args');
    if (typeof arg !== 'string') throw refuse(`args[${index}] is not a string`);
    if (arg.length > MAX_TEXT_CHARS) throw refuse(`args[${index}] is longer`);
    out.push(arg);
  }
  return out;
}

function checkEnv(env, allowedNames) {
  if (env === undefined) return undefined;
  if (env === null || typeof env !== 'object' || Array.isArray(env))
    throw invalidArgument('sandbox_exec env must be an object with string values.');
  const names = keysOf(env, 'sandbox_exec env');
  if (names.length > MAX_ENV_ENTRIES)
    throw invalidArgument(`sandbox_exec env must contain no more than ${MAX_ENV_ENTRIES} entries.`);
  const copy = Object.create(null);
  for (const name of names) {
    if (!ENV_NAME_PATTERN.test(name))
      throw invalidArgument(`sandbox_exec env names must match ${ENV_NAME_PATTERN.source}: ${quoted(name)} does not.`);
    if (isBlockedEnvName(name))
      throw invalidArgument(
        `sandbox_exec env cannot set a loader or interpreter hook (${HOOKS_TEXT}): ${quoted(name)}.`,
      );
    if (!allowedNames.includes(name)) {
      const allowed = allowedNames.length > 0 ? allowedNames.join(', ') : 'none';
      throw invalidArgument(
        `sandbox_exec env ${quoted(name)} is not allowed (allowed: ${allowed}); to allow it, create the tool with sandbox({ commands, env: [${quoted(name)}] }).`,
      );
    }
    const text = read(env, name, 'sandbox_exec env');
    if (typeof text !== 'string' || text.length > MAX_TEXT_CHARS) {
      throw invalidArgument(
        `sandbox_exec env values must be strings no longer than ${MAX_TEXT_CHARS} characters: ${quoted(name)} is not.`,
      );
    }
    copy[name] = text;
  }
  return copy;
}
