/**
 * The demo organization's people: the users and teams `npm start` seeds (app/demo-seed.ts) and
 * `npm run token` mints tokens for. Plain data, so anything may import it without pulling in
 * the seeding code.
 */
export const DEMO_ORGANIZATION = { id: "org_demo", name: "Demo Organization" } as const;

export const DEMO_USERS = [
  { id: "user_ada", name: "Ada Lovelace", email: "ada@demo.example" },
  { id: "user_grace", name: "Grace Hopper", email: "grace@demo.example" },
  { id: "user_alan", name: "Alan Turing", email: "alan@demo.example" },
  { id: "user_katherine", name: "Katherine Johnson", email: "katherine@demo.example" },
  { id: "user_linus", name: "Linus Pauling", email: "linus@demo.example" },
  { id: "user_margaret", name: "Margaret Hamilton", email: "margaret@demo.example" },
  { id: "user_edsger", name: "Edsger Dijkstra", email: "edsger@demo.example" },
  { id: "user_barbara", name: "Barbara Liskov", email: "barbara@demo.example" },
] as const;

export const DEMO_TEAMS = [
  { id: "team_platform", name: "Platform", members: ["user_ada", "user_grace", "user_margaret", "user_edsger"] },
  { id: "team_research", name: "Research", members: ["user_alan", "user_katherine", "user_linus"] },
  { id: "team_product", name: "Product", members: ["user_ada", "user_barbara", "user_katherine"] },
] as const;
