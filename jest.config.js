// ESM + ts-jest: PGlite and Prisma's client are ESM (and PGlite's CJS build uses dynamic
// import anyway), so tests run as ES modules under --experimental-vm-modules (set in
// package.json's test script). ts-jest does not type-check here: CI runs `tsc --noEmit`.

// The AWS SDK warns once per process on Node 20 that its releases after January 2027 need
// Node 22. The README says so (Supported Node versions); in a test log it is noise on every file.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";

/**
 * Where the memory went: one Jest process for all 84 files peaked at 14.9 GB. Under
 * --experimental-vm-modules every test file gets its own vm context and its own copy of every
 * module it imports (Prisma's client, the AWS SDK, graphql, Hive's gateway, PGlite's WASM), and
 * Node does not free a context whose ES modules were linked with a dynamic-import callback
 * (nodejs/node#63186, jestjs/jest#14605: SourceTextModules stay reachable through their async
 * context frames). So each finished file kept 300-500 MB for the rest of the run, and the
 * garbage collector spent more and more of the run walking it. Nothing in our code can release
 * a context Node keeps; what we can do is not keep the process that holds it: every file runs in
 * a worker process of its own, replaced by a fresh one after the file (a few hundred ms), so the
 * leak lives as long as the file. Jest compares `workerIdleMemoryLimit` with the worker's JS heap
 * only, and what a PGlite file keeps is mostly WASM memory outside it: at 256 MB a worker that
 * ran two PGlite files with small heaps was kept and reached 2.4 GB. So the limit is one no
 * worker stays under: every file gets a new worker.
 *
 * `npm run test:fast` (the web app's, the unit and the composition tests) overrides the limit
 * with 1 GB: a fresh worker costs each file about 1.3 s of CPU before its first test (the worker,
 * Jest's runtime, ts-jest), about half of that run's CPU, while its files open no PGlite
 * database, so what they leave behind is on the heap the limit measures. Measured beside other
 * jobs (load 14): 74 CPU-seconds with reused workers against 148 with a worker per file, for
 * the same 537 tests.
 */
/** @type {import('jest').Config} */
export default {
  testEnvironment: "node",
  extensionsToTreatAsEsm: [".ts"],
  moduleNameMapper: { "^(\\.{1,2}/.*)\\.js$": "$1" },
  transform: {
    "^.+\\.ts$": ["ts-jest", { useESM: true, diagnostics: false }],
  },
  testMatch: ["<rootDir>/test/**/*.test.ts"],
  // The multi-instance topology's suite starts ~20 processes on real engines: it runs once per CI
  // run, by itself (npm run test:topology), not in each of the default suite's three passes.
  testPathIgnorePatterns: ["/node_modules/", "<rootDir>/test/topology/"],
  testTimeout: 60_000,
  // Every suite closes the servers, pools and databases it opens; a worker that still held a
  // handle (an SDK socket, a worker-thread pool) would otherwise keep the run from ending.
  // `npm test -- --detectOpenHandles` shows what is left.
  forceExit: true,
  // Two workers on CI's two cores: each file has its own database (an in-memory PGlite, or a
  // PostgreSQL database created for it by test/support/database.ts).
  maxWorkers: 2,
  workerIdleMemoryLimit: "1MB",
  // Database images shared by the run's files (test/support/database.ts).
  globalSetup: "<rootDir>/test/support/global-setup.mjs",
  globalTeardown: "<rootDir>/test/support/global-teardown.mjs",
  reporters: ["default", ["<rootDir>/test/support/slowest-files-reporter.mjs", { count: 15 }]],
};
