/**
 * The empty PGlite cluster image a new database starts from instead of initdb: made when missing
 * and kept where the next process finds it, read (not remade) when present, named by PGlite's
 * version and the extensions, and a database opened from it migrates and keeps its data.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "@jest/globals";
import { PGlite } from "@electric-sql/pglite";
import { openDatabase, PGLITE_EXTENSIONS } from "../../lib/database/connect.js";
import { migrate, readMigrations } from "../../lib/database/migrate.js";
import { clusterImage, clusterImagePath, isNewDataDirectory } from "../../lib/database/pglite-cluster-image.js";

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "pglite-cluster-image-"));
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

describe("the PGlite cluster image", () => {
  it("is made once when missing, written whole where the next process looks, and opens as an empty cluster", async () => {
    const folder = path.join(scratch, "made");
    const file = clusterImagePath(PGLITE_EXTENSIONS, folder);
    expect(fs.existsSync(file)).toBe(false);
    const image = await clusterImage(PGLITE_EXTENSIONS, folder);
    expect(fs.statSync(file).size).toBe(image.size);
    // No temporary file is left beside it.
    expect(fs.readdirSync(folder)).toEqual([path.basename(file)]);
    // The same process asks again: the same image, not a second initdb.
    expect(await clusterImage(PGLITE_EXTENSIONS, folder)).toBe(image);

    const cluster = new PGlite({ loadDataDir: image, extensions: PGLITE_EXTENSIONS });
    try {
      const tables = await cluster.query<{ count: number }>("SELECT count(*)::int AS count FROM pg_tables WHERE schemaname = 'public'");
      expect(tables.rows[0]!.count).toBe(0);
    } finally {
      await cluster.close();
    }
  });

  it("is read from its file when present: what the file holds is what a new database starts from", async () => {
    // An image with a marker table, put where the image for these extensions is looked for: a
    // database that starts from it has the table, which initdb would not have made.
    const marked = new PGlite({ extensions: PGLITE_EXTENSIONS });
    await marked.exec("CREATE TABLE made_from_the_file (id int)");
    const image = await marked.dumpDataDir("none");
    await marked.close();
    const folder = path.join(scratch, "read");
    fs.mkdirSync(folder);
    fs.writeFileSync(clusterImagePath(PGLITE_EXTENSIONS, folder), Buffer.from(await image.arrayBuffer()));

    const read = await clusterImage(PGLITE_EXTENSIONS, folder);
    const cluster = new PGlite({ loadDataDir: read, extensions: PGLITE_EXTENSIONS });
    try {
      expect((await cluster.query("SELECT * FROM made_from_the_file")).rows).toEqual([]);
    } finally {
      await cluster.close();
    }
  });

  it("is named by the extensions it was made with, so a change of them never loads an old cluster", () => {
    const { vector } = PGLITE_EXTENSIONS;
    expect(clusterImagePath({ vector }, scratch)).not.toBe(clusterImagePath(PGLITE_EXTENSIONS, scratch));
    expect(clusterImagePath(PGLITE_EXTENSIONS, scratch)).toBe(clusterImagePath({ ...PGLITE_EXTENSIONS }, scratch));
  });

  it("fills a new data folder, which then migrates, keeps its rows across a reopen, and is not refilled", async () => {
    const dataDir = path.join(scratch, "data");
    expect(isNewDataDirectory(dataDir)).toBe(true);
    const first = await openDatabase({ url: null, pgliteDataDir: dataDir });
    try {
      expect(isNewDataDirectory(dataDir)).toBe(false);
      expect((await migrate(first)).applied).toHaveLength(readMigrations().length);
      await first.withSession((session) => session.exec("INSERT INTO organizations (id, name) VALUES ('acme', 'Acme')"));
    } finally {
      await first.close();
    }
    // A folder with a cluster opens as it is: loading the image over it would lose the rows (PGlite refuses to).
    const again = await openDatabase({ url: null, pgliteDataDir: dataDir });
    try {
      expect((await migrate(again)).applied).toEqual([]);
      const rows = await again.withSession((session) => session.query<{ name: string }>("SELECT name FROM organizations WHERE id = 'acme'"));
      expect(rows.map((row) => row.name)).toEqual(["Acme"]);
    } finally {
      await again.close();
    }
  });
});
