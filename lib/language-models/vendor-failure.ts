/**
 * A LanguageModelError with what the paid-call path needs to decide on a retry: how long the
 * vendor asked us to wait (Retry-After) and the HTTP status. Both clients throw it; the
 * contract's callers can keep treating it as a plain LanguageModelError.
 */
import { LanguageModelError, type LanguageModelErrorCode } from "./language-model.js";

export class VendorFailure extends LanguageModelError {
  constructor(
    code: LanguageModelErrorCode,
    message: string,
    /** How long the vendor asked us to wait before trying again, in ms (bounded by MAX_RETRY_AFTER_MS). */
    readonly retryAfterMs?: number,
    readonly httpStatus?: number,
  ) {
    super(code, message);
    this.name = "VendorFailure";
  }
}

/** Checks what the contract leaves to each client to refuse: no messages, or a bound that is not a positive integer. */
export function checkRequest(messages: readonly { content: string }[], maxOutputTokens: number): void {
  if (messages.length === 0) throw new RangeError("a generation request needs at least one message");
  if (!Number.isInteger(maxOutputTokens) || maxOutputTokens < 1) throw new RangeError(`maxOutputTokens must be a positive integer, got ${maxOutputTokens}`);
}
