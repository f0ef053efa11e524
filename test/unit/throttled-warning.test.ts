/**
 * The one "warn at most every N ms" that every Redis or replica client uses while its backend is
 * down: the first warning is logged at once, repeats within the interval are dropped, and two
 * conditions keep separate clocks.
 */
import { afterEach, describe, expect, it, jest } from "@jest/globals";
import { throttledWarning } from "../../lib/logger.js";
import { recordingLogger } from "../support/recording-logger.js";

describe("throttledWarning", () => {
  afterEach(() => {
    jest.useRealTimers();
  });

  it("logs the first warning, drops repeats for the interval, then logs again", () => {
    jest.useFakeTimers({ now: 1_000_000 });
    const logger = recordingLogger();
    const warn = throttledWarning(logger, 30_000);
    warn("Redis down (1)");
    warn("Redis down (2)");
    jest.setSystemTime(1_000_000 + 29_999);
    warn("Redis down (3)");
    jest.setSystemTime(1_000_000 + 30_000);
    warn("Redis down (4)");
    expect(logger.lines).toEqual(["warn Redis down (1)", "warn Redis down (4)"]);
  });

  it("keeps one clock per condition", () => {
    jest.useFakeTimers({ now: 5_000 });
    const logger = recordingLogger();
    const cache = throttledWarning(logger);
    const replica = throttledWarning(logger);
    cache("cache down");
    replica("replica down");
    cache("cache down again");
    expect(logger.lines).toEqual(["warn cache down", "warn replica down"]);
  });
});
