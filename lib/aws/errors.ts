/**
 * What an AWS backend's failure means to a search provider. The SDK throws a dozen exception
 * classes per service (and Bedrock, S3 Vectors and STS name the same situation differently:
 * `ThrottlingException`, `TooManyRequestsException`, `Throttling`); a provider only needs to
 * know whether to say "try again later", "fix your permissions", "fix the request", "it is
 * gone", "too slow" or "broken". The message is one line a user can read: the service's own
 * message when it is plain text, never a stack, a request id, a signature or a credential.
 */

export type AwsProviderStatus = "RATE_LIMITED" | "ACCESS_DENIED" | "BAD_REQUEST" | "NOT_FOUND" | "TIMEOUT" | "ERROR";

/** The GraphQL-style code each status is reported with (`extensions.code` where it surfaces). */
const CODES: Record<AwsProviderStatus, string> = {
  RATE_LIMITED: "AWS_RATE_LIMITED",
  ACCESS_DENIED: "AWS_ACCESS_DENIED",
  BAD_REQUEST: "AWS_BAD_REQUEST",
  NOT_FOUND: "AWS_NOT_FOUND",
  TIMEOUT: "AWS_TIMEOUT",
  ERROR: "AWS_ERROR",
};

export class AwsBackendError extends Error {
  readonly code: string;
  /** Whether the same call may succeed later without anyone changing anything. */
  readonly retryable: boolean;

  constructor(
    readonly status: AwsProviderStatus,
    message: string,
    /** The service's exception name (e.g. "ThrottlingException"), for logs and tests. */
    readonly awsErrorName?: string,
  ) {
    super(message);
    this.name = "AwsBackendError";
    this.code = CODES[status];
    this.retryable = status === "RATE_LIMITED" || status === "TIMEOUT";
  }
}

const STATUS_BY_AWS_NAME: Record<string, AwsProviderStatus> = {
  ThrottlingException: "RATE_LIMITED",
  TooManyRequestsException: "RATE_LIMITED",
  Throttling: "RATE_LIMITED",
  ServiceQuotaExceededException: "RATE_LIMITED",
  AccessDeniedException: "ACCESS_DENIED",
  AccessDenied: "ACCESS_DENIED",
  UnrecognizedClientException: "ACCESS_DENIED",
  InvalidClientTokenId: "ACCESS_DENIED",
  ExpiredTokenException: "ACCESS_DENIED",
  ExpiredToken: "ACCESS_DENIED",
  SignatureDoesNotMatch: "ACCESS_DENIED",
  ValidationException: "BAD_REQUEST",
  ValidationError: "BAD_REQUEST",
  ResourceNotFoundException: "NOT_FOUND",
  NotFoundException: "NOT_FOUND",
  RequestTimeoutException: "TIMEOUT",
};

const WHAT_TO_DO: Record<AwsProviderStatus, string> = {
  RATE_LIMITED: "AWS is throttling these calls; retry in a few seconds",
  ACCESS_DENIED: "the AWS credentials may not make this call; check the key, role or policy",
  BAD_REQUEST: "AWS refused the request as invalid",
  NOT_FOUND: "AWS has no such resource in this account and region",
  TIMEOUT: "AWS did not answer in time",
  ERROR: "the AWS call failed",
};

/** Anything that looks like a key, a token or a signature is cut out of a service's message. */
const SECRET_LOOKING = /\b(?:A[SK]IA[A-Z0-9]{12,}|[A-Za-z0-9/+=]{40,})\b/g;

function plainLine(message: unknown): string {
  if (typeof message !== "string") return "";
  const line = (message.split("\n").find((part) => part.trim().length > 0) ?? "").trim().replace(SECRET_LOOKING, "…");
  if (/^\s*at\s|\bError:\s|<\?xml|[{}]/.test(line)) return "";
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}

/**
 * Turns whatever an SDK call threw into an AwsBackendError. `what` names the call for the
 * message ("Bedrock knowledge base KB123 (us-east-1)"); `aborted` says the caller's deadline
 * or signal ended it, which the SDK reports as a plain AbortError.
 */
export function toAwsBackendError(error: unknown, what: string, aborted: boolean): AwsBackendError {
  if (error instanceof AwsBackendError) return error;
  const name = error instanceof Error ? error.name : "";
  if (aborted || name === "AbortError" || name === "TimeoutError") {
    return new AwsBackendError("TIMEOUT", `${what}: ${WHAT_TO_DO.TIMEOUT}`, name || undefined);
  }
  const status = STATUS_BY_AWS_NAME[name] ?? "ERROR";
  const serviceMessage = status === "ERROR" && !(error as { $metadata?: unknown })?.$metadata ? "" : plainLine((error as Error | undefined)?.message);
  const detail = serviceMessage ? ` (${serviceMessage})` : "";
  return new AwsBackendError(status, `${what}: ${WHAT_TO_DO[status]}${detail}`, name || undefined);
}

/** The caller's signal and a deadline as one signal (whichever ends first). */
export function deadlineSignal(timeoutMs: number, signal: AbortSignal | undefined): AbortSignal {
  const deadline = AbortSignal.timeout(Math.max(1, Math.floor(timeoutMs)));
  return signal ? AbortSignal.any([signal, deadline]) : deadline;
}
