// The pages of an authorization request (the code flow and the device flow alike): the provider sends the
// browser to /oauth/interaction/<uid> when the user must sign in or consent. Sign-in asks for the login and
// password (unless the browser is signed in already); consent names the app and each scope in plain words,
// with Allow and Deny. The answer goes back to the provider, which continues the flow: a code for the app,
// or `access_denied`.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type Provider from 'oidc-provider';
import type { Grant, InteractionResults } from 'oidc-provider';
import { newGrantId, type User } from '../store/index.ts';
import { html } from './html.ts';
import { checkSignIn, formOf, type PagesContext, sendPage, signInForm, WRONG_CSRF } from './pages.ts';
import { errorBody, interactionPath } from './provider.ts';
import { scopeWords } from './scopes.ts';

type Interaction = Awaited<ReturnType<Provider['interactionDetails']>>;

export function interactionRoutes(
  scope: FastifyInstance,
  context: PagesContext,
  provider: () => Provider,
): void {
  /** The interaction of this browser with this uid, or an error page (undefined). */
  async function interactionOf(
    request: FastifyRequest,
    reply: FastifyReply,
  ): Promise<Interaction | undefined> {
    const { uid } = request.params as { uid: string };
    const details = await provider()
      .interactionDetails(request.raw, reply.raw)
      .catch(() => undefined);
    if (details && details.uid === uid) return details;
    sendPage(
      reply,
      400,
      'This request has expired',
      html`<p class="error" role="alert">This sign-in request has expired, or was started in another browser.</p>
<p>Go back to the app and start again.</p>`,
    );
    return undefined;
  }

  async function finish(
    request: FastifyRequest,
    reply: FastifyReply,
    result: InteractionResults,
    merge: boolean,
  ): Promise<FastifyReply> {
    const returnTo = await provider().interactionResult(request.raw, reply.raw, result, {
      mergeWithLastSubmission: merge,
    });
    return reply.code(303).header('location', returnTo).header('cache-control', 'no-store').send();
  }

  async function signInPage(
    request: FastifyRequest,
    reply: FastifyReply,
    details: Interaction,
    status = 200,
    message?: string,
    login?: string,
  ): Promise<FastifyReply> {
    const csrf = context.browsers.csrfToken(request, reply);
    const client = await provider().Client.find(String(details.params.client_id));
    return sendPage(
      reply,
      status,
      'Sign in',
      html`<p>Sign in to chessport to continue to <strong>${client?.clientName ?? 'the app'}</strong>.</p>
${signInForm(`${interactionPath(details.uid)}/login`, csrf, message, login)}`,
    );
  }

  async function consentPage(
    request: FastifyRequest,
    reply: FastifyReply,
    details: Interaction,
    user: User,
  ): Promise<FastifyReply> {
    const client = await provider().Client.find(String(details.params.client_id));
    const asked = String(details.params.scope ?? '')
      .split(' ')
      .filter(Boolean);
    const words = scopeWords(asked);
    const redirect =
      typeof details.params.redirect_uri === 'string' ? URL.parse(details.params.redirect_uri) : null;
    const csrf = context.browsers.csrfToken(request, reply);
    return sendPage(
      reply,
      200,
      'Allow access?',
      html`<p><strong>${client?.clientName ?? 'An app'}</strong> asks for access to your chessport account, ${user.login}. It wants to:</p>
<ul>
${words.map((w) => html`<li>${w}</li>\n`)}</ul>
<p>You can take this access back at any time on <a href="/account">your account page</a>.</p>
${redirect ? html`<p>After you answer, you go back to <strong>${redirect.origin}</strong>.</p>` : ''}
<form method="post" action="${interactionPath(details.uid)}/consent">
<input type="hidden" name="csrf" value="${csrf}">
<p><button type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="deny">Deny</button></p>
</form>`,
    );
  }

  /** The browser's user when it is the one the request is for (its session's), else undefined. */
  async function userFor(request: FastifyRequest, details: Interaction): Promise<User | undefined> {
    const user = await context.browsers.signedIn(request);
    if (!user) return undefined;
    if (details.prompt.name === 'login') return user;
    return user.id === details.session?.accountId ? user : undefined;
  }

  scope.get('/oauth/interaction/:uid', async (request, reply) => {
    const details = await interactionOf(request, reply);
    if (!details) return reply;
    const user = await userFor(request, details);
    if (!user) return signInPage(request, reply, details);
    if (details.prompt.name === 'login') {
      return finish(request, reply, { login: { accountId: user.id } }, false);
    }
    return consentPage(request, reply, details, user);
  });

  scope.post('/oauth/interaction/:uid/login', async (request, reply) => {
    const details = await interactionOf(request, reply);
    if (!details) return reply;
    const form = formOf(request);
    if (!context.browsers.csrfValid(request, form.get('csrf') ?? undefined)) {
      return signInPage(request, reply, details, 403, WRONG_CSRF);
    }
    const outcome = await checkSignIn(context, request, form);
    if (!('user' in outcome)) {
      if (outcome.retryAfterS) reply.header('retry-after', String(outcome.retryAfterS));
      return signInPage(request, reply, details, outcome.status, outcome.message, form.get('login') ?? '');
    }
    await context.browsers.signIn(reply, outcome.user);
    return finish(request, reply, { login: { accountId: outcome.user.id } }, false);
  });

  scope.post('/oauth/interaction/:uid/consent', async (request, reply) => {
    const details = await interactionOf(request, reply);
    if (!details) return reply;
    const form = formOf(request);
    if (!context.browsers.csrfValid(request, form.get('csrf') ?? undefined)) {
      return sendPage(reply, 403, 'Allow access?', html`<p class="error" role="alert">${WRONG_CSRF}</p>`);
    }
    const user = await userFor(request, details);
    if (!user || details.prompt.name !== 'consent') return signInPage(request, reply, details);
    const decision = form.get('decision');
    if (decision === 'deny') {
      return finish(
        request,
        reply,
        { error: 'access_denied', error_description: 'The user denied the request.' },
        false,
      );
    }
    if (decision !== 'allow') {
      return sendPage(reply, 400, 'Allow access?', errorBody('invalid_request', 'choose Allow or Deny'));
    }
    const { Grant: GrantModel } = provider();
    const existing = details.grantId
      ? ((await GrantModel.find(details.grantId)) as Grant | undefined)
      : undefined;
    let grant = existing;
    if (!grant) {
      grant = new GrantModel({ accountId: user.id, clientId: String(details.params.client_id) });
      // Our id, not the provider's: one of those in 64 begins with '-', which a command line reads as an option.
      grant.jti = newGrantId();
    }
    const missing = (details.prompt.details as { missingOIDCScope?: string[] }).missingOIDCScope;
    if (missing?.length) grant.addOIDCScope(missing.join(' '));
    const grantId = await grant.save();
    return finish(request, reply, { consent: { grantId } }, true);
  });
}
