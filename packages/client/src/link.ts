// RFC 8288 Link header: the target of one relation type, resolved against the request's URL.

const LINK_VALUE = /<([^>]*)>((?:\s*;\s*[^;,]+)*)/g;
const REL_PARAM = /;\s*rel\s*=\s*(?:"([^"]*)"|([^\s;,"]+))/i;

/** @internal The absolute target of the link whose rel (a space-separated list) names `rel`, or null. */
export function linkTarget(header: string | null, rel: string, requestUrl: string): string | null {
  if (!header) return null;
  for (const match of header.matchAll(LINK_VALUE)) {
    const relParam = REL_PARAM.exec(match[2] ?? '');
    const rels = (relParam?.[1] ?? relParam?.[2] ?? '').toLowerCase().split(/\s+/);
    if (rels.includes(rel)) return new URL(match[1] ?? '', requestUrl).href;
  }
  return null;
}
