// Personal access tokens (docs/developer-console.md#personal-access-tokens) at /account/tokens: a signed-in
// user makes a token for a script of their own, with a description, the scopes they tick and an expiry
// (30 days by default, at most 365, or none where PERSONAL_TOKENS_NO_EXPIRY allows it). The token is shown
// once; the list shows each token's scopes, when it was made, when it expires and when it was last used, with
// Revoke. The tokens belong to the user's own built-in app (store.personalTokens), which no OAuth endpoint
// knows as a client, and they have no grant: the OAuth endpoints refuse them.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { SCOPES } from '../domain/scopes.ts';
import type { User } from '../store/index.ts';
import { html, when } from './html.ts';
import {
  errorPage,
  formOf,
  type PagesContext,
  sendPage,
  signInPath,
  strictForm,
  WRONG_CSRF,
} from './pages.ts';
import { SCOPE_WORDS } from './scopes.ts';

export const TOKENS_PATH = '/account/tokens';

/** A personal token's default lifetime and the longest one, in days. */
export const DEFAULT_TOKEN_DAYS = 30;
export const MAX_TOKEN_DAYS = 365;
const MAX_DESCRIPTION_LENGTH = 200;
/** The most live personal tokens one user keeps. */
export const MAX_PERSONAL_TOKENS = 100;
const DAY_MS = 86_400_000;

// C0 and C1 controls and DEL, refused in a description as in names.
const CONTROL = /[^\u0020-\u007e\u00a0-\u{10ffff}]/u;

interface TokenForm {
  description: string;
  scopes: string[];
  expiresInDays: string;
}

export function personalTokenRoutes(scope: FastifyInstance, context: PagesContext): void {
  const { store } = context;
  const noExpiry = context.settings.personalTokensNoExpiry;

  async function signedIn(request: FastifyRequest, reply: FastifyReply): Promise<User | undefined> {
    const user = await context.browsers.signedIn(request);
    if (!user) {
      const back = request.method === 'GET' ? (request.url.split('?')[0] ?? TOKENS_PATH) : TOKENS_PATH;
      reply.code(303).header('location', signInPath(back)).send();
    }
    return user;
  }

  function csrfForm(request: FastifyRequest, reply: FastifyReply): URLSearchParams | undefined {
    const form = formOf(request);
    if (context.browsers.csrfValid(request, form.get('csrf') ?? undefined)) return form;
    errorPage(reply, 403, 'Personal access tokens', WRONG_CSRF);
    return undefined;
  }

  /** The form's values checked, or the message that refuses them. */
  function check(
    values: TokenForm,
  ): { description: string; scopes: string[]; expiresAt: number | null } | { message: string } {
    const description = values.description.trim();
    if (description === '') return { message: 'Describe what the token is for.' };
    if (CONTROL.test(description)) return { message: 'The description must not hold control characters.' };
    if ([...description].length > MAX_DESCRIPTION_LENGTH) {
      return { message: `The description is at most ${MAX_DESCRIPTION_LENGTH} characters.` };
    }
    if (values.scopes.length === 0) return { message: 'Tick at least one scope.' };
    const unknown = values.scopes.find((s) => !(SCOPES as readonly string[]).includes(s));
    if (unknown !== undefined) return { message: `There is no scope "${unknown}".` };
    if (new Set(values.scopes).size !== values.scopes.length) return { message: 'A scope is ticked twice.' };
    const days = values.expiresInDays.trim();
    if (days === 'none' || (days === '' && noExpiry)) {
      if (!noExpiry) return { message: 'Tokens without an expiry are not allowed on this server.' };
      return { description, scopes: values.scopes, expiresAt: null };
    }
    const n = /^[0-9]{1,3}$/.test(days) ? Number(days) : Number.NaN;
    if (!(n >= 1 && n <= MAX_TOKEN_DAYS)) {
      return {
        message: `The expiry is a number of days from 1 to ${MAX_TOKEN_DAYS}${noExpiry ? ', or none' : ''}.`,
      };
    }
    return { description, scopes: values.scopes, expiresAt: Date.now() + n * DAY_MS };
  }

  function newTokenPage(
    request: FastifyRequest,
    reply: FastifyReply,
    status = 200,
    values: TokenForm = { description: '', scopes: [], expiresInDays: String(DEFAULT_TOKEN_DAYS) },
    message?: string,
  ): FastifyReply {
    const csrf = context.browsers.csrfToken(request, reply);
    const boxes = SCOPES.map(
      (
        s,
      ) => html`<p><input type="checkbox" id="scope-${s}" name="scope" value="${s}"${values.scopes.includes(s) ? html` checked` : ''}>
<label class="check" for="scope-${s}"><code>${s}</code>: ${SCOPE_WORDS[s]}</label></p>
`,
    );
    return sendPage(
      reply,
      status,
      'New personal access token',
      html`<p><a href="${TOKENS_PATH}">Your personal access tokens</a></p>
${message ? html`<p class="error" role="alert">${message}</p>` : ''}
<form method="post" action="${TOKENS_PATH}/new">
<input type="hidden" name="csrf" value="${csrf}">
<p><label for="description">What is it for?</label>
<input type="text" id="description" name="description" value="${values.description}" maxlength="${MAX_DESCRIPTION_LENGTH}" required></p>
<fieldset>
<legend>What may it do?</legend>
${boxes}</fieldset>
<p><label for="expires_in_days">Expires after (days)</label>
<input type="text" inputmode="numeric" id="expires_in_days" name="expires_in_days" value="${values.expiresInDays}" aria-describedby="expiry-help"></p>
<p id="expiry-help">From 1 to ${String(MAX_TOKEN_DAYS)} days${noExpiry ? html`, or <code>none</code> for a token that does not expire` : ''}.</p>
<p><button type="submit">Make the token</button></p>
</form>`,
    );
  }

  scope.get(TOKENS_PATH, async (request, reply) => {
    const user = await signedIn(request, reply);
    if (!user) return reply;
    const csrf = context.browsers.csrfToken(request, reply);
    const tokens = await store.personalTokens.list(user.id);
    const now = Date.now();
    const { done } = request.query as { done?: string };
    const rows = tokens.map(
      (t) => html`<tr>
<td>${t.description ?? ''}</td>
<td>${t.scopes.join(' ')}</td>
<td>${when(t.createdAt)}</td>
<td>${t.expiresAt === null ? 'never' : t.expiresAt <= now ? html`expired ${when(t.expiresAt)}` : when(t.expiresAt)}</td>
<td>${when(t.lastUsedAt, 'never')}</td>
<td><form method="post" action="${TOKENS_PATH}/${t.id}/revoke">
<input type="hidden" name="csrf" value="${csrf}">
<button type="submit" aria-label="Revoke ${t.description ?? 'the token'}">Revoke</button>
</form></td>
</tr>
`,
    );
    return sendPage(
      reply,
      200,
      'Personal access tokens',
      html`<p><a href="/account">Your account</a></p>
${done === 'revoked' ? html`<p class="notice" role="status">The token is revoked.</p>` : ''}
<p>A personal access token lets a script of your own read your chessport data through the API, as <code>Authorization: Bearer &lt;token&gt;</code>.</p>
<p><a href="${TOKENS_PATH}/new">Make a new token</a></p>
${
  rows.length > 0
    ? html`<div class="wide"><table>
<caption>Your tokens</caption>
<thead><tr><th scope="col">Description</th><th scope="col">Scopes</th><th scope="col">Created</th><th scope="col">Expires</th><th scope="col">Last used</th><th scope="col">Action</th></tr></thead>
<tbody>
${rows}</tbody>
</table></div>`
    : html`<p>You have no personal access token.</p>`
}`,
    );
  });

  scope.get(`${TOKENS_PATH}/new`, async (request, reply) => {
    const user = await signedIn(request, reply);
    if (!user) return reply;
    return newTokenPage(request, reply);
  });

  scope.post(`${TOKENS_PATH}/new`, async (request, reply) => {
    const form = csrfForm(request, reply);
    if (!form) return reply;
    const user = await signedIn(request, reply);
    if (!user) return reply;
    const values: TokenForm = {
      description: form.get('description') ?? '',
      scopes: form.getAll('scope'),
      expiresInDays: form.get('expires_in_days') ?? String(DEFAULT_TOKEN_DAYS),
    };
    const strict = strictForm(form, ['csrf', 'description', 'scope', 'expires_in_days'], ['scope']);
    const checked = strict ? { message: strict } : check(values);
    if ('message' in checked) return newTokenPage(request, reply, 400, values, checked.message);
    if ((await store.personalTokens.list(user.id)).length >= MAX_PERSONAL_TOKENS) {
      return newTokenPage(
        request,
        reply,
        409,
        values,
        `You have ${MAX_PERSONAL_TOKENS} tokens, the most one user keeps: revoke one first.`,
      );
    }
    const { token } = await store.personalTokens.issue(user, checked);
    return sendPage(
      reply,
      201,
      'New personal access token',
      html`<p class="notice" role="status">The token is made.</p>
<p><code class="secret" data-testid="personal-token">${token}</code></p>
<p><strong>Copy it now: it is shown this once.</strong> Only its hash is kept.</p>
<p>It may: ${checked.scopes.join(', ')}. ${checked.expiresAt === null ? 'It does not expire.' : html`It expires ${when(checked.expiresAt)}.`}</p>
<p><a href="${TOKENS_PATH}">Your personal access tokens</a></p>`,
    );
  });

  scope.post(`${TOKENS_PATH}/:token/revoke`, async (request, reply) => {
    const form = csrfForm(request, reply);
    if (!form) return reply;
    const user = await signedIn(request, reply);
    if (!user) return reply;
    const strict = strictForm(form, ['csrf']);
    if (strict) return errorPage(reply, 400, 'Personal access tokens', strict);
    if (!(await store.personalTokens.revoke(user.id, (request.params as { token: string }).token))) {
      return errorPage(reply, 404, 'Not found', 'There is no such token of yours.');
    }
    return reply.code(303).header('location', `${TOKENS_PATH}?done=revoked`).send();
  });
}
