/**
 * Cleaning vendor fields: plainText (tags, comments, script/style content, entities, control
 * characters, whitespace, length on a code point boundary, hostile megabytes), safeUrl (only
 * absolute http(s) links without credentials) and normalizeUrl (the duplicate-collapsing key).
 */
import { describe, expect, it } from "@jest/globals";
import { MAX_URL_LENGTH, normalizeUrl, plainText, safeUrl } from "../../lib/external-apis/sanitize.js";

describe("plainText", () => {
  it("decodes the common entities, named and numeric", () => {
    expect(plainText("Tom &amp; Jerry &lt;3 &gt; &quot;cats&quot; &#39;n&apos; mice", 200)).toBe(`Tom & Jerry <3 > "cats" 'n' mice`);
    expect(plainText("a&nbsp;b &#65;&#x42;&#X43; &#128512;", 200)).toBe("a b ABC \u{1F600}");
    expect(plainText("&unknown; AT&T & co &#xZZ; a=1&copy=2", 200)).toBe("&unknown; AT&T & co &#xZZ; a=1&copy=2");
    expect(plainText("&#0; &#xD800; &#x110000;", 200)).toBe("\ufffd \ufffd \ufffd");
  });

  it("decodes every named reference HTML defines, not a short list", () => {
    expect(plainText("Caf&eacute; &Uuml;ber &rarr; na&iuml;ve &frac12; &alpha;&beta; &hearts;", 200)).toBe("Café Über → naïve ½ αβ ♥");
    // Two-code-point and astral references, and the longest name HTML has.
    expect(plainText("&NotNestedGreaterGreater; &Afr; &CounterClockwiseContourIntegral;", 200)).toBe("\u2AA2\u0338 \u{1D504} \u2233");
    // Past the longest reference there is nothing to decode, and a flood of them stays linear.
    expect(plainText(`&${"a".repeat(60)};`, 200)).toBe(`&${"a".repeat(60)};`);
    expect(plainText("&eacute;".repeat(200_000), 10)).toBe("é".repeat(10));
  });

  it("never turns decoded entities back into markup: &lt;b&gt; is text", () => {
    expect(plainText("&lt;script&gt;alert(1)&lt;/script&gt;", 200)).toBe("<script>alert(1)</script>");
  });

  it("strips tags and comments, keeping words apart at block boundaries", () => {
    expect(plainText("The <b>best</b> <em class=\"x\">pizza</em> in <a href='/r?a=1&b=2' title='1 > 0'>Naples</a>", 200)).toBe(
      "The best pizza in Naples",
    );
    expect(plainText("<p>First</p><p>Second</p><ul><li>one</li><li>two</li></ul>", 200)).toBe("First\n\nSecond\n\none\ntwo");
    expect(plainText("before<!-- a <b>comment</b> -->after <!DOCTYPE html><?xml version='1.0'?>end", 200)).toBe("beforeafter end");
    expect(plainText("a<br/>b<td>c</td><td>d</td>", 200)).toBe("a\nb c d");
  });

  it("drops the content of script and style, whatever the case of the closing tag", () => {
    expect(plainText("Hi<script type=\"text/javascript\">alert('<b>x</b>')</SCRIPT> there<style>p{color:red}</style>!", 200)).toBe("Hi there!");
    expect(plainText("visible<script>never closed ... 5 MB of it", 200)).toBe("visible");
  });

  it("keeps a lone < that starts no tag, and drops what an unclosed comment hides", () => {
    expect(plainText("if a<b and c < d then 1<2", 200)).toBe("if a<b and c < d then 1<2");
    expect(plainText("x <<< y >>> z", 200)).toBe("x <<< y >>> z");
    expect(plainText("shown <!-- hidden forever", 200)).toBe("shown");
  });

  it("drops control and bidi override characters, replaces NUL and unpaired surrogates", () => {
    expect(plainText("a\u0000b\u0007c\u001bd\u007fe\u009bf", 200)).toBe("a\ufffdbcdef");
    expect(plainText("evil\u202Egnp.exe \ufeffbom \u2066iso\u2069", 200)).toBe("evilgnp.exe bom iso");
    expect(plainText("lone \ud800 high, lone \udc00 low, pair \ud83d\ude00", 200)).toBe("lone \ufffd high, lone \ufffd low, pair \ud83d\ude00");
  });

  it("collapses whitespace: spaces to one, a line break to one, more to a paragraph break; trims", () => {
    expect(plainText("  a \t\u00a0 b\u2003c  ", 200)).toBe("a b c");
    expect(plainText("line one\r\nline two\n\n\n\nparagraph\r\n\r\nnext\u2028end\n", 200)).toBe("line one\nline two\n\nparagraph\n\nnext\nend");
  });

  it("cuts at maxChars without splitting a surrogate pair", () => {
    expect(plainText("abcdef", 3)).toBe("abc");
    expect(plainText("ab\u{1F600}cd", 3)).toBe("ab");
    expect(plainText("ab\u{1F600}cd", 4)).toBe("ab\u{1F600}");
    expect(plainText("word   word", 5)).toBe("word");
    expect(plainText("anything", 0)).toBe("");
  });

  it("returns an empty string for anything that is not a string", () => {
    for (const value of [undefined, null, 42, { toString: () => "<b>x</b>" }, ["a"], true]) expect(plainText(value, 100)).toBe("");
  });

  it("refuses a maxChars that is not a non-negative integer", () => {
    expect(() => plainText("x", -1)).toThrow(RangeError);
    expect(() => plainText("x", Number.NaN)).toThrow("plainText needs a maxChars that is an integer >= 0, got NaN");
  });

  it("finishes on 5 MB of hostile markup (runs of <, unclosed tags and quotes, & without ;)", () => {
    const fiveMb = 5 * 1024 * 1024;
    expect(plainText("<".repeat(fiveMb), 10)).toBe("<".repeat(10));
    expect(plainText("<".repeat(fiveMb), fiveMb + 1)).toHaveLength(fiveMb);
    expect(plainText("<a".repeat(fiveMb / 2), 8)).toBe("<a<a<a<a");
    expect(plainText("ok <a title='" + "x".repeat(fiveMb), 100)).toBe("ok <a title='" + "x".repeat(87));
    // One tag from the first "<" to the only ">": its quotes pair up inside it.
    expect(plainText("<a x='".repeat(fiveMb / 6) + ">tail", 100)).toBe("tail");
    expect(plainText("&".repeat(fiveMb), 3)).toBe("&&&");
    expect(plainText("&".repeat(fiveMb), fiveMb)).toHaveLength(fiveMb);
    expect(plainText("<!--".repeat(fiveMb / 4), 100)).toBe("");
    expect(plainText("<script>".repeat(fiveMb / 8), 100)).toBe("");
    expect(plainText("x</".repeat(fiveMb / 3), 6)).toBe("x</x</");
    expect(plainText("<b>ok</b> ".repeat(fiveMb / 10), 20)).toBe("ok ok ok ok ok ok ok");
  });
});

describe("safeUrl", () => {
  it("keeps absolute http and https URLs, in their WHATWG serialization", () => {
    expect(safeUrl("https://example.com/a?b=1#c")).toBe("https://example.com/a?b=1#c");
    expect(safeUrl("  HTTP://Example.COM  ")).toBe("http://example.com/");
    expect(safeUrl("https://bücher.example/straße")).toBe("https://xn--bcher-kva.example/stra%C3%9Fe");
    expect(safeUrl("https://example.com/<script>")).toBe("https://example.com/%3Cscript%3E");
  });

  it("drops every other scheme, relative and malformed links, credentials and over-long URLs", () => {
    for (const bad of [
      "javascript:alert(1)",
      "JaVaScRiPt:alert(1)",
      "java\nscript:alert(1)",
      "data:text/html,<script>alert(1)</script>",
      "vbscript:msgbox",
      "file:///etc/passwd",
      "ftp://example.com/file",
      "mailto:a@example.com",
      "/relative/path",
      "//example.com/protocol-relative",
      "example.com",
      "https://",
      "http://exa mple.com",
      "https://user:pass@example.com/",
      "https://user@example.com/",
      "",
      `https://example.com/${"a".repeat(MAX_URL_LENGTH)}`,
    ]) {
      expect([bad, safeUrl(bad)]).toEqual([bad, null]);
    }
    for (const value of [undefined, null, 7, {}, new URL("https://example.com/")]) expect(safeUrl(value)).toBeNull();
  });

  it("measures the length after serialization too", () => {
    const fits = `https://example.com/${"a".repeat(MAX_URL_LENGTH - 20)}`;
    expect(safeUrl(fits)).toBe(fits);
    // 600 "é" are 1,220 characters as typed and 3,620 percent-encoded.
    expect(safeUrl(`https://example.com/${"é".repeat(600)}`)).toBeNull();
  });
});

describe("normalizeUrl", () => {
  it("folds scheme, case of the host, www., default ports, trailing slash and fragment", () => {
    const key = "https://example.com/guide";
    for (const same of [
      "https://example.com/guide",
      "http://example.com/guide",
      "HTTPS://WWW.Example.COM/guide/",
      "https://www.example.com:443/guide#section-2",
      "http://example.com:80/guide//",
      "https://example.com./guide",
    ]) {
      expect([same, normalizeUrl(same)]).toEqual([same, key]);
    }
    expect(normalizeUrl("https://www.example.com")).toBe("https://example.com/");
    expect(normalizeUrl("https://example.com/")).toBe("https://example.com/");
  });

  it("drops tracking parameters and sorts the others", () => {
    expect(
      normalizeUrl(
        "https://example.com/p?utm_source=news&UTM_Medium=mail&b=2&gclid=x&fbclid=y&msclkid=z&mc_cid=1&mc_eid=2&ref=hn&ref_src=twsrc&igshid=q&_ga=1.2&yclid=9&a=1",
      ),
    ).toBe("https://example.com/p?a=1&b=2");
    expect(normalizeUrl("https://example.com/p?utm_campaign=spring")).toBe("https://example.com/p");
    expect(normalizeUrl("https://example.com/p?z=1&a=2&a=1")).toBe(normalizeUrl("https://example.com/p?a=1&a=2&z=1"));
    // "reference" and "page" are not tracking parameters.
    expect(normalizeUrl("https://example.com/p?reference=1&page=2")).toBe("https://example.com/p?page=2&reference=1");
  });

  it("keeps what tells pages apart: path case, other ports, subdomains, query values", () => {
    expect(normalizeUrl("https://example.com/Guide")).not.toBe(normalizeUrl("https://example.com/guide"));
    expect(normalizeUrl("https://example.com:8443/guide")).toBe("https://example.com:8443/guide");
    expect(normalizeUrl("https://docs.example.com/")).not.toBe(normalizeUrl("https://example.com/"));
    expect(normalizeUrl("https://example.com/?q=a")).not.toBe(normalizeUrl("https://example.com/?q=b"));
  });

  it("gives a value that is not an http(s) URL back as its own key", () => {
    expect(normalizeUrl(" not a url ")).toBe("not a url");
    expect(normalizeUrl("mailto:a@example.com")).toBe("mailto:a@example.com");
  });
});
