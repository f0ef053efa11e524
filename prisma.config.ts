// Prisma CLI configuration (Prisma 7 keeps the datasource URL here, not in schema.prisma).
// The application never reads this file: it builds its client in lib/database/connect.ts.
import { defineConfig } from "prisma/config";

export default defineConfig({
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
  datasource: { url: process.env.DATABASE_URL ?? "postgresql://localhost:5432/postgres" },
});
