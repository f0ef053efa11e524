/**
 * The gateway's request body, bounded and measured as it streams in (a Yoga/Hive plugin).
 *
 * Yoga has a body limit of its own (`maxRequestBodySize`, 25,000,000 bytes by default), but Hive's
 * gateway runtime does not pass that option through, so the gateway admitted 25 MB instead of the
 * documented 16 MB. This plugin wraps whichever request parser Yoga picked, the way Yoga's own
 * limit does: it counts the bytes as the parser reads them and fails the read at the limit (413
 * REQUEST_ENTITY_TOO_LARGE), whatever Content-Length said or whether there was one (chunked
 * bodies). Once the body is read, `afterRead` learns how many bytes it really had: the rate
 * limiter charges for them there, so a chunked 10 MB body costs what the same body with a
 * Content-Length does.
 */
import type { GatewayPlugin } from "@graphql-hive/gateway-runtime";
import { GraphQLError } from "graphql";
import { oversizedBodyMessage } from "../http-body.js";

export interface RequestBodyLimitOptions {
  maxBytes: number;
  /** Called once the parser has read the whole body; throw a GraphQLError to refuse the request. */
  afterRead?(request: Request, bytes: number, serverContext: unknown): Promise<void>;
}

export const REQUEST_ENTITY_TOO_LARGE = "REQUEST_ENTITY_TOO_LARGE";

export function bodyTooLarge(maxBytes: number): GraphQLError {
  return new GraphQLError(oversizedBodyMessage(maxBytes), {
    // `connection: close`: the rest of the body is not read, so the connection cannot serve another request.
    extensions: { code: REQUEST_ENTITY_TOO_LARGE, maxBytes, http: { status: 413, headers: { connection: "close" } } },
  });
}

export function requestBodyLimit({ maxBytes, afterRead }: RequestBodyLimitOptions): GatewayPlugin {
  return {
    onRequestParse({ request, requestParser, setRequestParser, serverContext, fetchAPI }) {
      const declared = Number(request.headers.get("content-length") ?? NaN);
      if (Number.isFinite(declared) && declared > maxBytes) throw bodyTooLarge(maxBytes);
      if (!requestParser || !request.body) return;
      const parse = requestParser;
      setRequestParser(async (original) => {
        let bytes = 0;
        // As in Yoga's own limit: a native body needs the native TransformStream, a ponyfilled one the runtime's.
        const Transform = original.body instanceof ReadableStream ? TransformStream : fetchAPI.TransformStream;
        const counted = original.body!.pipeThrough(
          new Transform<Uint8Array, Uint8Array>({
            transform(chunk, controller) {
              bytes += chunk.byteLength;
              if (bytes > maxBytes) return controller.error(bodyTooLarge(maxBytes));
              controller.enqueue(chunk);
            },
          }),
        );
        const limited = new fetchAPI.Request(original.url, { method: original.method, headers: original.headers, signal: original.signal, body: counted, duplex: "half" } as RequestInit);
        let params: Awaited<ReturnType<typeof parse>>;
        try {
          params = await parse(limited);
        } catch (error) {
          // The bytes were read even though the body is refused: they are charged all the same.
          await afterRead?.(original, bytes, serverContext).catch(() => undefined);
          throw error;
        }
        await afterRead?.(original, bytes, serverContext);
        return params;
      });
    },
  };
}
