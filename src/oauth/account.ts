// /account: the signed-in user's connected apps (their active grants) with what each may do, when it was
// granted and when the app last got a token, and a button that revokes the app's access and refresh tokens
// at once. Sign-in and sign-out live here too.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { User } from '../store/index.ts';
import { html } from './html.ts';
import { checkSignIn, formOf, type PagesContext, sendPage, signInForm, WRONG_CSRF } from './pages.ts';
import { scopeWords } from './scopes.ts';

export const ACCOUNT_PATH = '/account';
const SIGN_IN_PATH = '/account/signin';

/** A time as its ISO form in a time element, shown in UTC: the page has no script to show local time. */
function when(ms: number | null) {
  if (ms === null) return html`not yet`;
  const iso = new Date(ms).toISOString();
  return html`<time datetime="${iso}">${iso.slice(0, 16).replace('T', ' ')} UTC</time>`;
}

export function accountRoutes(scope: FastifyInstance, context: PagesContext): void {
  const { store } = context;

  function signInPage(
    request: FastifyRequest,
    reply: FastifyReply,
    status = 200,
    message?: string,
    login?: string,
  ): FastifyReply {
    const csrf = context.browsers.csrfToken(request, reply);
    return sendPage(
      reply,
      status,
      'Sign in',
      html`<p>Sign in to see and manage the apps that have access to your chessport account.</p>
${signInForm(SIGN_IN_PATH, csrf, message, login)}`,
    );
  }

  async function accountPage(
    request: FastifyRequest,
    reply: FastifyReply,
    user: User,
    notice?: string,
  ): Promise<FastifyReply> {
    const grants = (await store.oauth.grants.list(user.id)).filter((g) => g.revokedAt === null);
    const csrf = context.browsers.csrfToken(request, reply);
    const apps = grants.map(
      (grant) => html`<section class="grant" aria-labelledby="grant-${grant.id}">
<h3 id="grant-${grant.id}">${grant.appName}</h3>
<p>Can:</p>
<ul>
${scopeWords(grant.scopes).map((w) => html`<li>${w}</li>\n`)}</ul>
<p>Allowed ${when(grant.createdAt)}. Last got a token: ${when(grant.lastUsedAt)}.</p>
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
      200,
      'Your account',
      html`${notice ? html`<p class="notice" role="status">${notice}</p>` : ''}
<p>Signed in as <strong>${user.login}</strong>.</p>
<form method="post" action="${ACCOUNT_PATH}/signout">
<input type="hidden" name="csrf" value="${csrf}">
<p><button type="submit">Sign out</button></p>
</form>
<h2>Connected apps</h2>
${apps.length > 0 ? apps : html`<p>No app has access to your account.</p>`}
<p><a href="/oauth/device">Connect a device with a code</a></p>`,
    );
  }

  scope.get(ACCOUNT_PATH, async (request, reply) => {
    const user = await context.browsers.signedIn(request);
    if (!user) return reply.code(303).header('location', SIGN_IN_PATH).send();
    const { done } = request.query as { done?: string };
    return accountPage(request, reply, user, done === 'revoked' ? 'The app’s access is revoked.' : undefined);
  });

  scope.get(SIGN_IN_PATH, async (request, reply) => signInPage(request, reply));

  scope.post(SIGN_IN_PATH, async (request, reply) => {
    const form = formOf(request);
    if (!context.browsers.csrfValid(request, form.get('csrf') ?? undefined)) {
      return signInPage(request, reply, 403, WRONG_CSRF);
    }
    const outcome = await checkSignIn(context, request, form);
    if (!('user' in outcome)) {
      if (outcome.retryAfterS) reply.header('retry-after', String(outcome.retryAfterS));
      return signInPage(request, reply, outcome.status, outcome.message, form.get('login') ?? '');
    }
    await context.browsers.signIn(reply, outcome.user);
    return reply.code(303).header('location', ACCOUNT_PATH).send();
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
}
