/**
 * Fetches a BEIR data set by name (`scifact`, `nfcorpus`, `fiqa`, …) from where the BEIR authors
 * publish them, one zip per data set, and unpacks it into a folder of data sets
 * (`.data/datasets/` by default), so `npm run eval -- --dataset scifact` works from a fresh clone.
 * A data set already there is used as it is, with no network.
 *
 * The archive comes from the network, so it is treated as hostile: the download and what it
 * unpacks to are bounded, entries must lie inside `<name>/` (no absolute paths, no `..`, no
 * links), entry sizes are checked against the central directory while inflating (yauzl's
 * validateEntrySizes), and nothing becomes visible under `<name>/` until the whole archive
 * unpacked: a failed or interrupted fetch leaves no half data set behind.
 */
import { createWriteStream } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { Readable, Transform } from "node:stream";
import yauzl from "yauzl";

export const BEIR_DATASETS_URL = "https://public.ukp.informatik.tu-darmstadt.de/thakur/BEIR/datasets/";
export const DEFAULT_DATASETS_DIRECTORY = ".data/datasets";

export interface FetchBeirOptions {
  /** Folder that holds data sets, one sub-folder each. */
  directory?: string;
  /** Where `<name>.zip` is fetched from (a mirror, or a local server in tests). */
  baseUrl?: string;
  /** Largest archive accepted (default 2 GiB; the largest BEIR sets are about 1.5 GB). */
  maxDownloadBytes?: number;
  /** Largest total unpacked size (default 8 GiB). */
  maxUnpackedBytes?: number;
  log?: (line: string) => void;
}

export class DatasetFetchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DatasetFetchError";
  }
}

const DATASET_NAME = /^[a-z0-9][a-z0-9-]{0,63}$/;

/** The data set's folder, fetched and unpacked first when it is not there yet. */
export async function fetchBeirDataset(name: string, options: FetchBeirOptions = {}): Promise<string> {
  if (!DATASET_NAME.test(name)) throw new DatasetFetchError(`"${name.slice(0, 80)}" is not a BEIR data set name: lower-case letters, digits and "-", e.g. scifact or trec-covid`);
  const directory = path.resolve(options.directory ?? DEFAULT_DATASETS_DIRECTORY);
  const target = path.join(directory, name);
  if (await exists(path.join(target, "corpus.jsonl"))) return target;

  const url = new URL(`${name}.zip`, options.baseUrl ?? BEIR_DATASETS_URL);
  const partial = path.join(directory, `.partial-${name}-${process.pid}`);
  await fs.rm(partial, { recursive: true, force: true });
  await fs.mkdir(partial, { recursive: true });
  try {
    const archive = path.join(partial, `${name}.zip`);
    options.log?.(`fetching ${url.href}`);
    await download(url, archive, options.maxDownloadBytes ?? 2 * 1024 ** 3);
    const unpacked = path.join(partial, "unpacked");
    await unzip(archive, unpacked, name, options.maxUnpackedBytes ?? 8 * 1024 ** 3);
    if (!(await exists(path.join(unpacked, name, "corpus.jsonl")))) throw new DatasetFetchError(`${url.href} holds no ${name}/corpus.jsonl: it is not a BEIR data set`);
    await fs.rm(target, { recursive: true, force: true });
    await fs.rename(path.join(unpacked, name), target);
    options.log?.(`unpacked ${name} into ${target}`);
    return target;
  } finally {
    await fs.rm(partial, { recursive: true, force: true });
  }
}

async function download(url: URL, file: string, maxBytes: number): Promise<void> {
  let response: Response;
  try {
    response = await fetch(url, { redirect: "follow", signal: AbortSignal.timeout(30 * 60_000) });
  } catch (error) {
    throw new DatasetFetchError(`cannot fetch ${url.href}: ${(error as Error).message}`);
  }
  if (!response.ok || !response.body) throw new DatasetFetchError(`${url.href} answered HTTP ${response.status}: no such data set there`);
  const declared = Number(response.headers.get("content-length") ?? NaN);
  if (declared > maxBytes) throw new DatasetFetchError(`${url.href} is ${declared} bytes, over the ${maxBytes}-byte limit`);
  let received = 0;
  const bounded = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      received += chunk.length;
      done(received > maxBytes ? new DatasetFetchError(`${url.href} sent more than ${maxBytes} bytes`) : null, chunk);
    },
  });
  await pipeline(Readable.fromWeb(response.body as import("node:stream/web").ReadableStream), bounded, createWriteStream(file));
}

function unzip(archive: string, into: string, name: string, maxBytes: number): Promise<void> {
  return new Promise((resolve, reject) => {
    yauzl.open(archive, { lazyEntries: true, validateEntrySizes: true, strictFileNames: true }, (openError, zip) => {
      if (openError || !zip) return reject(new DatasetFetchError(`the archive does not open as a zip: ${openError?.message}`));
      let unpacked = 0;
      const fail = (error: unknown) => {
        zip.close();
        reject(error instanceof DatasetFetchError ? error : new DatasetFetchError(`unpacking failed: ${(error as Error).message}`));
      };
      zip.on("error", fail);
      zip.on("end", () => resolve());
      zip.on("entry", (entry: yauzl.Entry) => {
        const entryPath = entry.fileName;
        // Only regular files and folders inside <name>/; macOS archives also carry __MACOSX/.
        if (entryPath.startsWith("__MACOSX/")) return zip.readEntry();
        const normalized = path.posix.normalize(entryPath);
        if (!(normalized === `${name}/` || normalized.startsWith(`${name}/`)) || normalized.includes("..") || path.posix.isAbsolute(normalized)) {
          return fail(new DatasetFetchError(`the archive holds "${entryPath.slice(0, 200)}", outside ${name}/`));
        }
        const mode = (entry.externalFileAttributes >>> 16) & 0o170000;
        if (mode === 0o120000) return fail(new DatasetFetchError(`the archive holds a symbolic link, "${entryPath.slice(0, 200)}"`));
        const destination = path.join(into, normalized);
        if (entryPath.endsWith("/")) {
          fs.mkdir(destination, { recursive: true }).then(() => zip.readEntry(), fail);
          return;
        }
        unpacked += entry.uncompressedSize;
        if (unpacked > maxBytes) return fail(new DatasetFetchError(`the archive unpacks to more than ${maxBytes} bytes`));
        fs.mkdir(path.dirname(destination), { recursive: true })
          .then(
            () =>
              new Promise<void>((done, failed) =>
                zip.openReadStream(entry, (streamError, stream) => {
                  if (streamError || !stream) return failed(streamError);
                  pipeline(stream, createWriteStream(destination)).then(done, failed);
                }),
              ),
          )
          .then(() => zip.readEntry(), fail);
      });
      zip.readEntry();
    });
  });
}

async function exists(file: string): Promise<boolean> {
  try {
    await fs.access(file);
    return true;
  } catch {
    return false;
  }
}
