// /account: the signed-in user's connected apps (their active grants) with what each may do, when it was
// granted and when the app last got a token, and a button that revokes the app's access and refresh tokens
// at once. Sign-in and sign-out live here too.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { User } from '../store/index.ts';
import { html, when } from './html.ts';
import {
  checkSignIn,
  formOf,
  nextPath,
  type PagesContext,
  sendPage,
  signInForm,
  strictForm,
  WRONG_CSRF,
} from './pages.ts';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from './password-rules.ts';
import { hashPassword } from './passwords.ts';
import { TOKENS_PATH } from './personal-tokens.ts';
import { scopeWords } from './scopes.ts';

export const ACCOUNT_PATH = '/account';
const SIGN_IN_PATH = '/account/signin';

export function accountRoutes(scope: FastifyInstance, context: PagesContext): void {
  const { store } = context;

  function signInPage(
    request: FastifyRequest,
    reply: FastifyReply,
    status = 200,
    message?: string,
    login?: string,
    next?: string,
  ): FastifyReply {
    const csrf = context.browsers.csrfToken(request, reply);
    return sendPage(
      reply,
      status,
      'Sign in',
      html`<p>Sign in to see and manage the apps that have access to your chessport account.</p>
${signInForm(SIGN_IN_PATH, csrf, message, login, next)}`,
    );
  }

  async function accountPage(
    request: FastifyRequest,
    reply: FastifyReply,
    user: User,
    notice?: string,
    error?: string,
    status = 200,
  ): Promise<FastifyReply> {
    const grants = (await store.oauth.grants.list(user.id)).filter((g) => g.revokedAt === null);
    const apiUse = await store.oauth.grants.lastApiUse(user.id);
    const csrf = context.browsers.csrfToken(request, reply);
    const consoleOpen = context.settings.developerConsole !== 'off';
    const apps = grants.map(
      (grant) => html`<section class="grant" aria-labelledby="grant-${grant.id}">
<h3 id="grant-${grant.id}">${grant.appName}</h3>
<p>Can:</p>
<ul>
${scopeWords(grant.scopes).map((w) => html`<li>${w}</li>\n`)}</ul>
<p>Allowed ${when(grant.createdAt)}. Last got a token: ${when(grant.lastUsedAt)}. Last used the API: ${when(apiUse.get(grant.id) ?? null, 'never')}.</p>
<form method="post" action="${ACCOUNT_PATH}/revoke">
<input type="hidden" name="csrf" value="${csrf}">
<input type="hidden" name="grant" value="${grant.id}">
<p><button type="submit">Revoke access of ${grant.appName}</button></p>
</form>
</section>
`,
    );
    return sendPage(
      reply,
      status,
      'Your account',
      html`${notice ? html`<p class="notice" role="status">${notice}</p>` : ''}
${error ? html`<p class="error" role="alert">${error}</p>` : ''}
<p>Signed in as <strong>${user.login}</strong>.</p>
<form method="post" action="${ACCOUNT_PATH}/signout">
<input type="hidden" name="csrf" value="${csrf}">
<p><button type="submit">Sign out</button></p>
</form>
<form method="post" action="${ACCOUNT_PATH}/signout-everywhere">
<input type="hidden" name="csrf" value="${csrf}">
<p><button type="submit">Sign out everywhere</button> (every browser and app sign-in of yours ends, this one too; apps you allowed keep their access)</p>
</form>
<nav aria-label="Account"><ul>
<li><a href="${TOKENS_PATH}">Personal access tokens</a></li>
${consoleOpen ? html`<li><a href="/developers">Developer console</a></li>` : ''}
<li><a href="/oauth/device">Connect a device with a code</a></li>
</ul></nav>
<h2>Connected apps</h2>
${apps.length > 0 ? apps : html`<p>No app has access to your account.</p>`}
<h2>Change your password</h2>
<form method="post" action="${ACCOUNT_PATH}/password">
<input type="hidden" name="csrf" value="${csrf}">
<p><label for="current_password">Current password</label>
<input type="password" id="current_password" name="current_password" autocomplete="current-password" required></p>
<p><label for="new_password">New password (${String(MIN_PASSWORD_LENGTH)} characters or more)</label>
<input type="password" id="new_password" name="new_password" autocomplete="new-password" minlength="${String(MIN_PASSWORD_LENGTH)}" required></p>
<p><label for="confirm_password">The new password again</label>
<input type="password" id="confirm_password" name="confirm_password" autocomplete="new-password" required></p>
<p>Your other sign-ins end; this browser stays signed in.</p>
<p><button type="submit">Change the password</button></p>
</form>`,
    );
  }

  scope.get(ACCOUNT_PATH, async (request, reply) => {
    const user = await context.browsers.signedIn(request);
    if (!user) return reply.code(303).header('location', SIGN_IN_PATH).send();
    const { done } = request.query as { done?: string };
    const notices: Record<string, string> = {
      revoked: 'The app’s access is revoked.',
      password: 'Your password is changed; your other sign-ins have ended.',
    };
    return accountPage(request, reply, user, done === undefined ? undefined : notices[done]);
  });

  scope.get(SIGN_IN_PATH, async (request, reply) => {
    const { next } = request.query as { next?: string };
    return signInPage(request, reply, 200, undefined, undefined, nextPath(next));
  });

  scope.post(SIGN_IN_PATH, async (request, reply) => {
    const form = formOf(request);
    const next = nextPath(form.get('next'));
    if (!context.browsers.csrfValid(request, form.get('csrf') ?? undefined)) {
      return signInPage(request, reply, 403, WRONG_CSRF, undefined, next);
    }
    const outcome = await checkSignIn(context, request, form);
    if (!('user' in outcome)) {
      if (outcome.retryAfterS) reply.header('retry-after', String(outcome.retryAfterS));
      return signInPage(request, reply, outcome.status, outcome.message, form.get('login') ?? '', next);
    }
    await context.browsers.signIn(reply, outcome.user);
    return reply
      .code(303)
      .header('location', next ?? ACCOUNT_PATH)
      .send();
  });

  scope.post(`${ACCOUNT_PATH}/signout`, async (request, reply) => {
    if (!context.browsers.csrfValid(request, formOf(request).get('csrf') ?? undefined)) {
      return sendPage(reply, 403, 'Your account', html`<p class="error" role="alert">${WRONG_CSRF}</p>`);
    }
    await context.browsers.signOut(request, reply);
    return reply.code(303).header('location', SIGN_IN_PATH).send();
  });

  scope.post(`${ACCOUNT_PATH}/revoke`, async (request, reply) => {
    const form = formOf(request);
    if (!context.browsers.csrfValid(request, form.get('csrf') ?? undefined)) {
      return sendPage(reply, 403, 'Your account', html`<p class="error" role="alert">${WRONG_CSRF}</p>`);
    }
    const user = await context.browsers.signedIn(request);
    if (!user) return reply.code(303).header('location', SIGN_IN_PATH).send();
    const id = form.get('grant') ?? '';
    // Only the user's own grants: another's id is no grant of theirs.
    if (id !== '') await store.oauth.grants.revoke(id, user.id);
    return reply.code(303).header('location', `${ACCOUNT_PATH}?done=revoked`).send();
  });

  scope.post(`${ACCOUNT_PATH}/signout-everywhere`, async (request, reply) => {
    if (!context.browsers.csrfValid(request, formOf(request).get('csrf') ?? undefined)) {
      return sendPage(reply, 403, 'Your account', html`<p class="error" role="alert">${WRONG_CSRF}</p>`);
    }
    const user = await context.browsers.signedIn(request);
    if (user) await store.accounts.endSignIns(user.id);
    await context.browsers.signOut(request, reply);
    return reply.code(303).header('location', SIGN_IN_PATH).send();
  });

  // A new password: the current one is checked under the sign-in throttle (a stolen session cannot guess it
  // faster than a sign-in could), every session of the user ends with the change (setPasswordHash), and this
  // browser is signed in afresh.
  scope.post(`${ACCOUNT_PATH}/password`, async (request, reply) => {
    const form = formOf(request);
    if (!context.browsers.csrfValid(request, form.get('csrf') ?? undefined)) {
      return sendPage(reply, 403, 'Your account', html`<p class="error" role="alert">${WRONG_CSRF}</p>`);
    }
    const user = await context.browsers.signedIn(request);
    if (!user) return reply.code(303).header('location', SIGN_IN_PATH).send();
    const strict = strictForm(form, ['csrf', 'current_password', 'new_password', 'confirm_password']);
    if (strict) return accountPage(request, reply, user, undefined, strict, 400);
    const fresh = form.get('new_password') ?? '';
    const length = [...fresh].length;
    if (length < MIN_PASSWORD_LENGTH || length > MAX_PASSWORD_LENGTH) {
      const words = `The new password must be ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters.`;
      return accountPage(request, reply, user, undefined, words, 400);
    }
    if (fresh !== form.get('confirm_password')) {
      return accountPage(request, reply, user, undefined, 'The new password and its repetition differ.', 400);
    }
    const check = new URLSearchParams({ login: user.login, password: form.get('current_password') ?? '' });
    const outcome = await checkSignIn(context, request, check);
    if (!('user' in outcome) || outcome.user.id !== user.id) {
      const refused = 'user' in outcome ? undefined : outcome;
      if (refused?.retryAfterS) reply.header('retry-after', String(refused.retryAfterS));
      const status = refused?.status ?? 401;
      const message = status === 429 && refused ? refused.message : 'The current password is wrong.';
      return accountPage(request, reply, user, undefined, message, status);
    }
    await store.accounts.setPasswordHash(user.id, await hashPassword(fresh));
    await context.browsers.signIn(reply, user);
    return reply.code(303).header('location', `${ACCOUNT_PATH}?done=password`).send();
  });
}
