// The Link header (RFC 8288 section 3), parsed by its grammar:
//
//   Link       = #link-value                         (a comma-separated list; empty elements are allowed)
//   link-value = "<" URI-Reference ">" *( OWS ";" OWS link-param )
//   link-param = token BWS [ "=" BWS ( token / quoted-string ) ]
//
// A quoted-string may hold commas, semicolons and `\`-escaped characters, so the header cannot be split on
// either. Parameter names are case-insensitive; only the first rel of a link counts (3.3); rel is a list of
// relation types separated by spaces, compared case-insensitively (2.1); a link with an anchor other than
// the request's URL is about another resource (3.2). A link-value that breaks the grammar keeps what was
// read before the fault, and parsing goes on at the next comma outside a quoted string or a <target>.

/** @internal One link-value: the target as written and its parameters in order, names lower-cased. */
export interface ParsedLink {
  target: string;
  /** Each parameter's value, unquoted and unescaped; null for a parameter without a value. */
  params: [name: string, value: string | null][];
}

const TCHAR = /[!#$%&'*+\-.^_`|~0-9A-Za-z]/;
const isOws = (char: string | undefined) => char === ' ' || char === '\t';

/** @internal Every link-value of a Link header, in order. */
export function parseLinks(header: string): ParsedLink[] {
  const links: ParsedLink[] = [];
  let i = 0;
  const skipOws = () => {
    while (isOws(header[i])) i++;
  };
  const token = (): string => {
    const start = i;
    while (i < header.length && TCHAR.test(header[i] as string)) i++;
    return header.slice(start, i);
  };
  /** The quoted-string at i (which is `"`), unescaped; undefined when it does not end. */
  const quoted = (): string | undefined => {
    let value = '';
    for (i++; i < header.length; i++) {
      const char = header[i] as string;
      if (char === '"') {
        i++;
        return value;
      }
      if (char === '\\') i++;
      if (i < header.length) value += header[i];
    }
    return undefined;
  };
  /** After a fault: past the next comma that is outside a quoted string and a <target>. */
  const skipElement = () => {
    let inQuote = false;
    let inTarget = false;
    for (; i < header.length; i++) {
      const char = header[i];
      if (inQuote) {
        if (char === '\\') i++;
        else if (char === '"') inQuote = false;
      } else if (inTarget) {
        if (char === '>') inTarget = false;
      } else if (char === '"') inQuote = true;
      else if (char === '<') inTarget = true;
      else if (char === ',') {
        i++;
        return;
      }
    }
  };
  /** The params of the link-value whose target ends before i; false on a fault. */
  const params = (link: ParsedLink): boolean => {
    for (;;) {
      skipOws();
      if (i >= header.length) return true;
      if (header[i] === ',') {
        i++;
        return true;
      }
      if (header[i] !== ';') return false;
      i++;
      skipOws();
      // An empty parameter (`<a>;, <b>` or `<a>; ; rel=next`) is no parameter.
      if (i >= header.length || header[i] === ',' || header[i] === ';') continue;
      const name = token().toLowerCase();
      if (!name) return false;
      skipOws();
      if (header[i] !== '=') {
        link.params.push([name, null]);
        continue;
      }
      i++;
      skipOws();
      const value = header[i] === '"' ? quoted() : token() || undefined;
      if (value === undefined) return false;
      link.params.push([name, value]);
    }
  };
  while (i < header.length) {
    skipOws();
    if (header[i] === ',') {
      i++;
      continue;
    }
    if (i >= header.length) break;
    const close = header[i] === '<' ? header.indexOf('>', i) : -1;
    if (close < 0) {
      skipElement();
      continue;
    }
    const link: ParsedLink = { target: header.slice(i + 1, close), params: [] };
    i = close + 1;
    links.push(link);
    if (!params(link)) skipElement();
  }
  return links;
}

/** @internal The relation types of a link: its first rel parameter, split at spaces, lower-cased. */
export function relationTypes(link: ParsedLink): string[] {
  const rel = link.params.find(([name]) => name === 'rel')?.[1] ?? '';
  return rel
    .toLowerCase()
    .split(/[ \t]+/)
    .filter((type) => type !== '');
}

/** @internal The first link of `rel` about the request's URL: its target resolved (url null if invalid). */
export function linkTarget(
  header: string | null,
  rel: string,
  requestUrl: string,
): { target: string; url: string | null } | null {
  if (!header) return null;
  const wanted = rel.toLowerCase();
  for (const link of parseLinks(header)) {
    if (!relationTypes(link).includes(wanted)) continue;
    const anchor = link.params.find(([name]) => name === 'anchor')?.[1];
    if (anchor !== undefined && resolve(anchor ?? '', requestUrl) !== resolve(requestUrl, requestUrl))
      continue;
    return { target: link.target, url: resolve(link.target, requestUrl) };
  }
  return null;
}

/** The absolute URL, or null for one that does not parse (URL.canParse is too new for some browsers). */
function resolve(reference: string, base: string): string | null {
  try {
    return new URL(reference, base).href;
  } catch {
    return null;
  }
}
