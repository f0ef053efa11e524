/**
 * Reads an incrementally delivered GraphQL answer (`@defer`) part by part, as it arrives: the
 * `multipart/mixed` framing Apollo Client and Relay read, and `text/event-stream` (GraphQL over
 * SSE, "distinct connections" mode). Each part is handed to `onPart` the moment its bytes are
 * complete, so a test can order what it read against what else happened meanwhile.
 */

export interface IncrementalPart {
  data?: Record<string, any> | null;
  errors?: Array<{ message: string; extensions?: Record<string, unknown> }>;
  incremental?: Array<{ data?: Record<string, any> | null; errors?: Array<{ message: string; extensions?: Record<string, unknown> }>; path: Array<string | number>; label?: string }>;
  hasNext?: boolean;
}

/** The parts of the answer, in order; `onPart` sees each one as soon as it is complete. */
export async function readParts(response: Response, onPart: (part: IncrementalPart) => void = () => {}): Promise<IncrementalPart[]> {
  const type = response.headers.get("content-type") ?? "";
  const parts: IncrementalPart[] = [];
  const emit = (json: string) => {
    const part = JSON.parse(json) as IncrementalPart;
    parts.push(part);
    onPart(part);
  };
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  const multipart = type.startsWith("multipart/mixed");
  const boundary = multipart ? `\r\n--${/boundary="?([^";]+)"?/.exec(type)?.[1] ?? "-"}` : "";
  if (!multipart && !type.startsWith("text/event-stream")) throw new Error(`not an incremental answer: content-type ${type}`);
  for (;;) {
    const { done, value } = await reader.read();
    if (value) buffer += decoder.decode(value, { stream: true });
    if (multipart) {
      // Every part is preceded by the boundary; a part is complete when the next boundary arrives.
      for (let next = buffer.indexOf(boundary, 1); next > 0; next = buffer.indexOf(boundary, 1)) {
        const chunk = buffer.slice(0, next);
        buffer = buffer.slice(next);
        const body = chunk.split("\r\n\r\n").slice(1).join("\r\n\r\n").trim();
        if (body) emit(body);
      }
    } else {
      for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
        const event = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const name = /^event: (.*)$/m.exec(event)?.[1];
        const data = event.split("\n").filter((line) => line.startsWith("data: ")).map((line) => line.slice(6)).join("\n");
        if (name === "next" && data) emit(data);
      }
    }
    if (done) break;
  }
  return parts;
}
