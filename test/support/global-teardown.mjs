import fs from "node:fs";

export default function globalTeardown() {
  if (process.env.TEST_DATABASE_IMAGES) fs.rmSync(process.env.TEST_DATABASE_IMAGES, { recursive: true, force: true });
}
