// `@vite-hub/sandbox/cloudflare`: the `Sandbox` Durable Object class a Worker exports for the
// cloudflare provider. It is @cloudflare/sandbox's own class, plus four RPC methods through which
// an instance named `vitehub-prepared-<digest[..40]>` stores the prepared project of that install
// digest in its Durable Object storage (docs/internals/prepared-projects.md). A store runs no
// Command and starts no container: reading it never wakes one. Same binding, same class name.
import { Sandbox as SdkSandbox } from '@cloudflare/sandbox';

/** Storage key of the record `{ generation, chunks, bytes }` of the kept archive. */
const RECORD = 'vitehub-prepared';
/** Bytes per stored value: under the 128 KiB value limit of key-value Durable Object storage. */
const CHUNK_BYTES = 128 * 1024;
/** The largest archive kept (bytes): 64 chunks, so one `put` of 65 keys (at most 128) writes it. */
const MAX_ARCHIVE_BYTES = 8 * 1024 * 1024;

const chunkKeys = (record) => Array.from({ length: record.chunks }, (_, i) => `${RECORD}:${record.generation}:${i}`);

export class Sandbox extends SdkSandbox {
  /** This Durable Object's storage (`ctx`, which the SDK's types keep protected). */
  get #storage() {
    return /** @type {any} */ (this).ctx.storage;
  }

  /** The kept archive's size in bytes, 0 when none is kept. Reads storage only. */
  async vitehubPreparedSize() {
    return (await this.#storage.get(RECORD))?.bytes ?? 0;
  }

  /**
   * The kept archive (`Uint8Array`), or `null` when none is kept. An archive whose chunks do not
   * add up to its record is dropped and answers `null`. Reads storage only.
   */
  async vitehubPreparedArchive() {
    const record = await this.#storage.get(RECORD);
    if (!record) return null;
    const keys = chunkKeys(record);
    const chunks = await this.#storage.get(keys);
    const archive = new Uint8Array(record.bytes);
    let at = 0;
    for (const key of keys) {
      const chunk = chunks.get(key);
      if (!(chunk instanceof Uint8Array) || at + chunk.length > record.bytes) break;
      archive.set(chunk, at);
      at += chunk.length;
    }
    if (at === record.bytes) return archive;
    await this.#storage.delete([RECORD, ...keys]);
    return null;
  }

  /**
   * Keeps `archive` (`Uint8Array`, at most 8 MiB) in place of the kept one: its chunks and its
   * record in one `put` (atomic: a reader sees the old archive or the new one, never a part),
   * then the old chunks are deleted. Throws a `TypeError` for anything else.
   */
  async vitehubKeepPreparedArchive(archive) {
    if (!(archive instanceof Uint8Array) || archive.length > MAX_ARCHIVE_BYTES) {
      throw new TypeError(`a prepared archive is a Uint8Array of at most ${MAX_ARCHIVE_BYTES} bytes`);
    }
    const old = await this.#storage.get(RECORD);
    const record = {
      generation: (old?.generation ?? 0) + 1,
      chunks: Math.ceil(archive.length / CHUNK_BYTES),
      bytes: archive.length,
    };
    const entries = { [RECORD]: record };
    chunkKeys(record).forEach((key, i) => {
      entries[key] = archive.slice(i * CHUNK_BYTES, (i + 1) * CHUNK_BYTES);
    });
    await this.#storage.put(entries);
    if (old) await this.#storage.delete(chunkKeys(old));
  }

  /** Deletes the kept archive; whether there was one. */
  async vitehubDropPreparedArchive() {
    const record = await this.#storage.get(RECORD);
    if (!record) return false;
    await this.#storage.delete([RECORD, ...chunkKeys(record)]);
    return true;
  }
}
