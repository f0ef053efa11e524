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
  // Integration suites share one PostgreSQL database in CI; run files one at a time there.
  maxWorkers: process.env.DATABASE_URL ? 1 : "50%",
};
