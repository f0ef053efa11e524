// Runs `prisma generate` on install. Prisma 7's generate checks for its native schema engine
// first and tries to download it, which fails offline even though generate does not use it;
// pointing PRISMA_SCHEMA_ENGINE_BINARY at any existing file skips that check.
import { spawnSync } from "node:child_process";

const env = { ...process.env };
env.PRISMA_SCHEMA_ENGINE_BINARY ??= process.execPath;
const result = spawnSync("npx", ["--no-install", "prisma", "generate"], { stdio: "inherit", env });
process.exit(result.status ?? 1);
