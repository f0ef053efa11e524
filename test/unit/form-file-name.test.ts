/**
 * The file name of a form upload, read from its part header (gateway/form-file-name.ts): raw
 * UTF-8, the HTML standard's %22 escape, RFC 5987's filename*, bytes that are not UTF-8, and a
 * body the runtime's own form parser accepts afterwards whatever the header said.
 */
import { describe, expect, it } from "@jest/globals";
import { formFile } from "../../gateway/form-file-name.js";

const CONTENT_TYPE = "multipart/form-data; boundary=xyz";

function body(disposition: Buffer | string, content = "# Title"): Buffer {
  return Buffer.concat([
    Buffer.from('--xyz\r\nContent-Disposition: form-data; name="category"\r\n\r\nnotes\r\n--xyz\r\n'),
    Buffer.from(disposition),
    Buffer.from(`\r\nContent-Type: text/markdown\r\n\r\n${content}\r\n--xyz--\r\n`),
  ]);
}

const withName = (bytes: Buffer) => Buffer.concat([Buffer.from('Content-Disposition: form-data; name="file"; filename="'), bytes, Buffer.from('"')]);

describe("formFile", () => {
  it("decodes the raw UTF-8 bytes browsers send, and undoes %22", () => {
    expect(formFile(body(withName(Buffer.from("Résumé 日本.md"))), CONTENT_TYPE, "file")!.fileName).toBe("Résumé 日本.md");
    expect(formFile(body(withName(Buffer.from("say %22hi%22.md"))), CONTENT_TYPE, "file")!.fileName).toBe('say "hi".md');
  });

  it("reads RFC 5987 filename* before filename, and bytes that are not UTF-8 as ISO-8859-1", () => {
    const extended = `Content-Disposition: form-data; name="file"; filename="fallback.md"; filename*=UTF-8''%C3%BCber%20plan.md`;
    expect(formFile(body(extended), CONTENT_TYPE, "file")!.fileName).toBe("über plan.md");
    expect(formFile(body(withName(Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x2e, 0x6d, 0x64]))), CONTENT_TYPE, "file")!.fileName).toBe("café.md");
  });

  it("gives the form parser a body it accepts, with the other fields and the content unchanged", async () => {
    const part = formFile(body(`Content-Disposition: form-data; name="file"; filename*=UTF-8''%C3%BCber.md`, "# Über"), CONTENT_TYPE, "file")!;
    const form = await new Response(new Blob([new Uint8Array(part.body)]), { headers: { "content-type": CONTENT_TYPE } }).formData();
    expect(form.get("category")).toBe("notes");
    expect(await (form.get("file") as File).text()).toBe("# Über");
  });

  it("answers null without a file part or a boundary, and a part without a name has no file name", () => {
    expect(formFile(body('Content-Disposition: form-data; name="other"; filename="a.md"'), CONTENT_TYPE, "file")).toBeNull();
    expect(formFile(body(withName(Buffer.from("a.md"))), "multipart/form-data", "file")).toBeNull();
    expect(formFile(body('Content-Disposition: form-data; name="file"'), CONTENT_TYPE, "file")!.fileName).toBeNull();
  });
});
