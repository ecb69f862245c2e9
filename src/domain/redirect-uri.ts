// What an app's redirect URI may be, for the CLI's `apps add` and the developer console alike: absolute,
// https, or http on a loopback IP literal (127.0.0.1, [::1]; a native app's, which then may use any port:
// docs/oauth.md), without a fragment or credentials (RFC 6749 3.1.2, RFC 8252). localhost is refused as
// RFC 8252 8.3 advises: a name can resolve elsewhere.

/** A redirect URI refused, said for the person who gave it (`what` names the field or option). */
export class RefusedRedirectUri extends Error {
  readonly code = 'ERR_REDIRECT_URI';
}

/** The redirect URI in its normal form, or a RefusedRedirectUri; `what` names where it came from. */
export function checkRedirectUri(text: string, what = '--redirect-uri'): string {
  const url = URL.parse(text);
  if (!url || text.includes('#') || /\s/u.test(text)) {
    throw new RefusedRedirectUri(
      `${what} must be an absolute URL without a fragment, such as https://app.example.org/callback, got "${text}"`,
    );
  }
  if (url.username || url.password)
    throw new RefusedRedirectUri(`${what} must not hold credentials, got "${text}"`);
  if (url.protocol === 'https:') return url.href;
  // The two loopback literals a native app listens on; other 127.x.x.x addresses are loopback too, but no
  // client library uses them, and one literal per family keeps the rule the docs and the messages say.
  if (url.protocol === 'http:' && (url.hostname === '127.0.0.1' || url.hostname === '[::1]')) return url.href;
  if (url.protocol === 'http:' && url.hostname === 'localhost') {
    throw new RefusedRedirectUri(
      `${what}: use http://127.0.0.1 (or http://[::1]) rather than localhost, got "${text}"`,
    );
  }
  throw new RefusedRedirectUri(
    `${what} must be https, or http on 127.0.0.1 or [::1] (a native app on the user's machine), got "${text}"`,
  );
}
