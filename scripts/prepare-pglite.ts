/**
 * `npm install`'s last step (postinstall): makes the empty PGlite cluster image a first `npm start`
 * fills its new data folder from, so that the start skips initdb (lib/database/pglite-cluster-image.ts).
 * Nothing here is required: without the image, the first start makes it.
 */
import { PGLITE_EXTENSIONS } from "../lib/database/connect.js";
import { clusterImage, clusterImagePath } from "../lib/database/pglite-cluster-image.js";
import { runMain } from "../lib/shutdown.js";

runMain(async () => {
  const began = performance.now();
  const image = await clusterImage(PGLITE_EXTENSIONS);
  process.stderr.write(`PGlite cluster image: ${clusterImagePath(PGLITE_EXTENSIONS)} (${(image.size / 1e6).toFixed(0)} MB, ${((performance.now() - began) / 1000).toFixed(1)} s)\n`);
});
