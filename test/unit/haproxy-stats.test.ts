/**
 * HAProxy's `show stat` CSV as the topology harness (deploy/local/topology.ts) reads it. A check
 * that is running when the stats are read reports its last result prefixed with "* " (HAProxy's
 * management guide, `check_status`); CI's topology run once read "* L7OK" for an UP server and
 * failed, so the prefix is read as a flag, not as part of the result.
 */
import { describe, expect, it } from "@jest/globals";
import { parseServerStates } from "../../deploy/local/topology.js";

const CSV = [
  "# pxname,svname,qcur,status,check_status,stot,wretr,wredis,",
  "search,FRONTEND,0,OPEN,,12,,,",
  "search,search-1,0,UP,L7OK,7,0,0,",
  "search,search-2,0,UP,* L7OK,5,1,0,",
  "search,BACKEND,0,UP,,12,1,0,",
  "postgres,standby,0,DOWN,* L4CON,0,0,0,",
  "",
].join("\n");

describe("parseServerStates", () => {
  it("reads each server's status and last check result, whether or not a check is running", () => {
    expect(parseServerStates(CSV)).toEqual([
      { backend: "search", server: "search-1", status: "UP", checkStatus: "L7OK", checkRunning: false, sessions: 7, retries: 0, redispatches: 0 },
      { backend: "search", server: "search-2", status: "UP", checkStatus: "L7OK", checkRunning: true, sessions: 5, retries: 1, redispatches: 0 },
      { backend: "postgres", server: "standby", status: "DOWN", checkStatus: "L4CON", checkRunning: true, sessions: 0, retries: 0, redispatches: 0 },
    ]);
  });
});
