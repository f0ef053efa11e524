/**
 * The bounds on uploads in flight (gateway/upload-admission.ts), counted directly: the e2e suite
 * (test/e2e/upload-admission.test.ts) holds real uploads open against a running gateway for the
 * per-user and per-organization bounds, but the process-wide bound needs more callers in flight
 * than that is worth, so here every place is taken by admission alone, as the gateway takes it
 * when a request's headers arrive, and given back as it is when the answer is out.
 */
import type http from "node:http";
import { describe, expect, it } from "@jest/globals";
import { MAX_UPLOADS_IN_FLIGHT, MAX_UPLOADS_IN_FLIGHT_PER_ORGANIZATION, MAX_UPLOADS_IN_FLIGHT_PER_USER, uploadAdmission, type UploadAdmission } from "../../gateway/upload-admission.js";
import { TEST_AUTH, tokenFor } from "../support/tenants.js";

/** The headers and socket of an upload request: all that admission reads. */
async function uploadFrom(organizationId: string, userId: string): Promise<http.IncomingMessage> {
  return { headers: { authorization: `Bearer ${await tokenFor(organizationId, userId)}` }, socket: { remoteAddress: "127.0.0.1" } } as unknown as http.IncomingMessage;
}

describe("uploads in flight", () => {
  it("the process admits MAX_UPLOADS_IN_FLIGHT across organizations, refuses the next with 503 OVERLOADED, and admits again once one is answered", async () => {
    const admit = uploadAdmission(TEST_AUTH, null);
    // Every organization up to its own bound, each user up to theirs: only the process's bound is left to refuse.
    const usersPerOrganization = MAX_UPLOADS_IN_FLIGHT_PER_ORGANIZATION / MAX_UPLOADS_IN_FLIGHT_PER_USER;
    const held: UploadAdmission[] = [];
    for (let organization = 0; held.length < MAX_UPLOADS_IN_FLIGHT; organization += 1) {
      for (let user = 0; user < usersPerOrganization && held.length < MAX_UPLOADS_IN_FLIGHT; user += 1) {
        for (let upload = 0; upload < MAX_UPLOADS_IN_FLIGHT_PER_USER && held.length < MAX_UPLOADS_IN_FLIGHT; upload += 1) {
          const admission = await admit(await uploadFrom(`org-${organization}`, `user-${user}`));
          expect(admission.refusal).toBeUndefined();
          held.push(admission);
        }
      }
    }

    const newcomer = await uploadFrom("org-newcomer", "nia");
    const refused = await admit(newcomer);
    expect(refused.refusal).toEqual({
      status: 503,
      code: "OVERLOADED",
      message: `The server is busy with ${MAX_UPLOADS_IN_FLIGHT} uploads: retry in a few seconds.`,
      headers: { "retry-after": "1" },
    });

    // Released twice, a place is still given back once.
    held[0]!.release!();
    held[0]!.release!();
    const admitted = await admit(newcomer);
    expect(admitted.refusal).toBeUndefined();
    expect((await admit(await uploadFrom("org-late", "lee"))).refusal?.status).toBe(503);

    for (const admission of [...held.slice(1), admitted]) admission.release!();
    const again = await Promise.all(Array.from({ length: MAX_UPLOADS_IN_FLIGHT_PER_USER }, async () => admit(await uploadFrom("org-0", "user-0"))));
    expect(again.map((admission) => admission.refusal)).toEqual(Array(MAX_UPLOADS_IN_FLIGHT_PER_USER).fill(undefined));
  });

  it("a user's and an organization's bounds are kept apart from other users' and organizations'", async () => {
    const admit = uploadAdmission(TEST_AUTH, null);
    for (let upload = 0; upload < MAX_UPLOADS_IN_FLIGHT_PER_USER; upload += 1) expect((await admit(await uploadFrom("org-a", "ada"))).refusal).toBeUndefined();
    expect((await admit(await uploadFrom("org-a", "ada"))).refusal).toMatchObject({ status: 429, code: "OVERLOADED" });
    // The same user id in another organization is another user.
    expect((await admit(await uploadFrom("org-b", "ada"))).refusal).toBeUndefined();
    for (let upload = MAX_UPLOADS_IN_FLIGHT_PER_USER; upload < MAX_UPLOADS_IN_FLIGHT_PER_ORGANIZATION; upload += 1) {
      expect((await admit(await uploadFrom("org-a", `colleague-${upload}`))).refusal).toBeUndefined();
    }
    expect((await admit(await uploadFrom("org-a", "someone-new"))).refusal).toMatchObject({ status: 429, code: "OVERLOADED" });
    expect((await admit(await uploadFrom("org-b", "bea"))).refusal).toBeUndefined();
  });
});
