// ESM + ts-jest: PGlite and Prisma's client are ESM (and PGlite's CJS build uses dynamic
// import anyway), so tests run as ES modules under --experimental-vm-modules (set in
// package.json's test script). ts-jest does not type-check here: CI runs `tsc --noEmit`.
/** @type {import('jest').Config} */
export default {
  testEnvironment: "node",
  extensionsToTreatAsEsm: [".ts"],
  moduleNameMapper: { "^(\\.{1,2}/.*)\\.js$": "$1" },
  transform: {
    "^.+\\.ts$": ["ts-jest", { useESM: true, diagnostics: false }],
  },
  testMatch: ["<rootDir>/test/**/*.test.ts"],
  testTimeout: 60_000,
  // Every suite closes the servers, pools and databases it opens, but a run in one process
  // (which "50%" of 2 cores is) still kept a handle open after the last suite on this machine
  // (worker-thread pools and SDK sockets of earlier suites are the suspects): exit once the
  // results are in rather than hang CI. `npm test -- --detectOpenHandles` shows what is left.
  forceExit: true,
  // Integration suites share one PostgreSQL database in CI; run files one at a time there.
  maxWorkers: process.env.DATABASE_URL ? 1 : "50%",
};
