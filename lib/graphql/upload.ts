/**
 * The `Upload` scalar: a file sent as a part of a GraphQL multipart request
 * (https://github.com/jaydenseric/graphql-multipart-request-spec), what Apollo Client's upload
 * link sends. The gateway reads the request (gateway/multipart-request.ts), bounds every part,
 * and hands each file on to the subgraph inside the variables as an `UploadValue`: its name,
 * media type and bytes in base64. So between the gateway and a subgraph an upload is ordinary
 * JSON, every plugin of the gateway (identity, rate limits, operation limits) and every check of
 * the subgraph runs on it unchanged, and no subgraph parses multipart bodies.
 */
import { GraphQLError, GraphQLScalarType, Kind } from "graphql";

/** At most this many files in one multipart request (and in one `uploadDocuments`). */
export const MAX_UPLOAD_FILES = 10;

/** One file as the gateway passes it on. */
export interface UploadValue {
  /** The name from the file part's Content-Disposition, decoded (gateway/form-file-name.ts). */
  fileName: string;
  /** The part's Content-Type, without parameters; absent when the client sent none. */
  mediaType?: string | null;
  /** The file's bytes, base64 (RFC 4648, with padding). */
  contentBase64: string;
}

const refused = (message: string) => new GraphQLError(message, { extensions: { code: "BAD_USER_INPUT" } });

export const Upload = new GraphQLScalarType<UploadValue, never>({
  name: "Upload",
  description: "A file, sent as a part of a GraphQL multipart request (the upload link of Apollo Client sends these).",
  serialize() {
    throw new GraphQLError("Upload is an input type: a file can be sent, never returned.");
  },
  parseValue(value) {
    const file = value as Partial<UploadValue> | null;
    if (
      typeof file !== "object" ||
      file === null ||
      typeof file.fileName !== "string" ||
      typeof file.contentBase64 !== "string" ||
      (file.mediaType != null && typeof file.mediaType !== "string")
    ) {
      throw refused("An Upload variable must be a file: send the request as multipart/form-data (the GraphQL multipart request spec) with the file's part named in `map`.");
    }
    return { fileName: file.fileName, mediaType: file.mediaType ?? null, contentBase64: file.contentBase64 };
  },
  parseLiteral(ast) {
    throw refused(`An Upload cannot be written in the query (got ${ast.kind === Kind.NULL ? "null" : "a literal"}): pass it as a variable, filled by a file part of a multipart request.`);
  },
});
