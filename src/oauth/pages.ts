// What the server's own pages share: their headers (a strict Content-Security-Policy that lets no script run
// and no site frame them, no caching, no referrer), form bodies, the sign-in form and its check (the
// throttle, then the password, with one answer for every failure), and how a page is sent.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Store, User } from '../store/index.ts';
import type { Browsers } from './browser.ts';
import { type Html, html, page } from './html.ts';
import { MAX_PASSWORD_LENGTH, verifyPassword } from './passwords.ts';
import type { OAuthSettings } from './settings.ts';
import type { GuessThrottle } from './throttle.ts';

export const PAGE_CSP =
  "default-src 'none'; style-src 'self'; img-src 'self'; frame-ancestors 'none'; base-uri 'none'";

/**
 * The authorization endpoint's answers may run one script: form_post's, allowed by its hash, which the
 * provider adds to this empty `script-src` (no script else). Every other answer of the provider (the device
 * code pages, the JSON endpoints) sends PAGE_CSP.
 */
export const AUTHORIZATION_CSP = `${PAGE_CSP}; script-src`;

export const PAGE_HEADERS = {
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
};

export interface PagesContext {
  store: Store;
  browsers: Browsers;
  throttle: GuessThrottle;
  settings: OAuthSettings;
}

/** Form bodies (application/x-www-form-urlencoded, at most 16 KiB) for the routes of this scope. */
export function formBodies(scope: FastifyInstance): void {
  scope.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: 16_384 },
    (_request, body, done) => done(null, new URLSearchParams(body as string)),
  );
}

export function formOf(request: FastifyRequest): URLSearchParams {
  return request.body instanceof URLSearchParams ? request.body : new URLSearchParams();
}

export function sendPage(reply: FastifyReply, status: number, title: string, main: Html): FastifyReply {
  return reply
    .code(status)
    .headers({ ...PAGE_HEADERS, 'content-security-policy': PAGE_CSP })
    .type('text/html; charset=utf-8')
    .send(page(title, main));
}

export function signInForm(action: string, csrf: string, message?: string, login = '', next = ''): Html {
  return html`${message ? html`<p class="error" role="alert">${message}</p>` : ''}
<form method="post" action="${action}">
<input type="hidden" name="csrf" value="${csrf}">
${next ? html`<input type="hidden" name="next" value="${next}">` : ''}
<p><label for="login">Login</label>
<input type="text" id="login" name="login" value="${login}" autocomplete="username" autocapitalize="none" spellcheck="false" required${login ? '' : html` autofocus`}></p>
<p><label for="password">Password</label>
<input type="password" id="password" name="password" autocomplete="current-password" required${login ? html` autofocus` : ''}></p>
<p><button type="submit">Sign in</button></p>
</form>`;
}

/**
 * Where a sign-in goes on to: a page of the account or of the developer console, else the account page. Only
 * a path of this site is followed (no other host, no `//`, no backslash), so the parameter sends nobody away.
 */
export function nextPath(text: string | null | undefined): string | undefined {
  if (!text || text.length > 200) return undefined;
  return /^\/(?:account|developers)(?:\/[A-Za-z0-9_-]+)*$/.test(text) ? text : undefined;
}

/** The page that signs a browser in and comes back to `path`. */
export function signInPath(path: string): string {
  return `/account/signin?next=${encodeURIComponent(path)}`;
}

/** A form's fields, or the message that refuses it: a field not in `allowed`, or one given twice. */
export function strictForm(
  form: URLSearchParams,
  allowed: readonly string[],
  repeatable: readonly string[] = [],
) {
  const seen = new Set<string>();
  for (const key of form.keys()) {
    if (!allowed.includes(key)) return `The form has a field this page does not know: "${key}".`;
    if (seen.has(key) && !repeatable.includes(key)) return `The field "${key}" is given more than once.`;
    seen.add(key);
  }
  return undefined;
}

/** A page that answers a refused request: its status, and the message. */
export function errorPage(reply: FastifyReply, status: number, title: string, message: string): FastifyReply {
  return sendPage(reply, status, title, html`<p class="error" role="alert">${message}</p>`);
}

export const WRONG_CSRF =
  'This form has expired or did not come from this site. Reload the page and try again.';

/** "Try again in N minutes.", for a throttle's wait in seconds. */
export function tryAgainIn(waitS: number): string {
  const minutes = Math.ceil(waitS / 60);
  return `Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`;
}

export type SignInOutcome = { user: User } | { status: 401 | 429; message: string; retryAfterS?: number };

/**
 * Checks a sign-in form: the attempt is counted first, and refused unchecked when the account or the address
 * has had its limit of attempts; else the password is verified (also for an unknown login, against a dummy
 * hash, so that both take the time of one scrypt). A right password gives its count back, and so does a check
 * that failed before it could tell (the store failing): only wrong passwords stay counted. Every failure gets
 * the same words.
 */
export async function checkSignIn(
  context: PagesContext,
  request: FastifyRequest,
  form: URLSearchParams,
): Promise<SignInOutcome> {
  const login = form.get('login') ?? '';
  const password = form.get('password') ?? '';
  const admission = await context.throttle.reserve(login, request.ip);
  if ('retryAfterS' in admission) {
    const wait = admission.retryAfterS;
    return { status: 429, message: `Too many failed sign-ins. ${tryAgainIn(wait)}`, retryAfterS: wait };
  }
  let user: User | undefined;
  try {
    const found = login === '' ? undefined : await context.store.accounts.findPasswordHash(login);
    const right = await verifyPassword(password.slice(0, MAX_PASSWORD_LENGTH), found?.hash ?? null);
    if (right && found && password.length <= MAX_PASSWORD_LENGTH) user = found.user;
  } catch (error) {
    await context.throttle.giveBack(admission.reservation);
    throw error;
  }
  if (!user) return { status: 401, message: 'The login or the password is wrong.' };
  await context.throttle.giveBack(admission.reservation);
  return { user };
}
