// The main module: the Rust Worker (build/, written by build.mjs) and the Sandbox Durable Object class.
export { default } from './build/index.js';
export { Sandbox } from '@cloudflare/sandbox';
