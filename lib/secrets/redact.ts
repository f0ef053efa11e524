/**
 * Log redaction: what must never reach a log line, whichever component wrote it. Applied by
 * lib/logger.ts to every line (messages and error stacks). Patterns are anchored on what the
 * secret looks like, so a line keeps everything else a reader needs.
 */
const PATTERNS: [RegExp, string][] = [
  // Authorization headers, whatever the scheme.
  [/\b(authorization|proxy-authorization)(["']?\s*[:=]\s*["']?)(bearer|basic|token)?\s*[^\s"',;]+/gi, "$1$2$3 [redacted]"],
  [/\bBearer\s+[A-Za-z0-9._~+/=-]{8,}/g, "Bearer [redacted]"],
  // JSON Web Tokens anywhere (header.payload.signature, the header starts with {" = eyJ).
  [/\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g, "[redacted JWT]"],
  // Provider keys with a recognisable shape: OpenAI / Perplexity style, AWS access key ids, Slack tokens.
  [/\b(sk|pk|pplx)-[A-Za-z0-9_-]{16,}/g, "$1-[redacted]"],
  [/\b(AKIA|ASIA)[0-9A-Z]{16}\b/g, "$1[redacted]"],
  [/\bxox[abpsr]-[A-Za-z0-9-]{10,}/g, "xox-[redacted]"],
  // key=value and "key": "value" pairs whose name says they hold a secret.
  [/\b([\w-]*(?:api[_-]?key|secret|password|passwd|access[_-]?key|access[_-]?token|refresh[_-]?token|session[_-]?token|private[_-]?key|signature)[\w-]*)(["']?\s*[:=]\s*["']?)[^\s"',;&]+/gi, "$1$2[redacted]"],
  // Passwords in connection URLs.
  [/(\/\/[^:/@\s]+):[^@\s]+@/g, "$1:[redacted]@"],
];

export function redactSecrets(text: string): string {
  let redacted = text;
  for (const [pattern, replacement] of PATTERNS) redacted = redacted.replace(pattern, replacement);
  return redacted;
}
