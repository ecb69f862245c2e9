// The developer console's apps (docs/developer-console.md): /developers lists the signed-in developer's apps,
// /developers/apps/new registers one (the rules of `chessport apps add`), and an app's page shows its client
// id, its secret once (when made or rotated), rotates the secret (the old one keeps working for a grace
// period the page states) and deletes the app. Its webhook endpoints are developer-webhooks.ts's. Who may use
// the console is DEVELOPER_CONSOLE's; every app, endpoint and delivery is found through its owner, so another
// developer's id gives 404 and changes nothing; every form carries the CSRF token (403 without it).
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { checkRedirectUri, RefusedRedirectUri } from '../domain/redirect-uri.ts';
import {
  type App,
  hashToken,
  type OAuthClient,
  StoreError,
  SUBSCRIBABLE_EVENTS,
  type SubscribableEvent,
  type User,
} from '../store/index.ts';
import { type Html, html, when } from './html.ts';
import {
  errorPage,
  formOf,
  type PagesContext,
  sendPage,
  signInPath,
  strictForm,
  WRONG_CSRF,
} from './pages.ts';

export const DEVELOPERS_PATH = '/developers';

/** How long a rotated-out client secret keeps working beside the new one. */
export const CLIENT_SECRET_GRACE_MS = 24 * 3_600_000;
const GRACE_WORDS = '24 hours';

/** The most apps one developer keeps, the most redirect URIs one app has. */
export const MAX_APPS_PER_DEVELOPER = 50;
const MAX_REDIRECT_URIS = 20;
const MAX_NAME_LENGTH = 200;
const MAX_DESCRIPTION_LENGTH = 1000;
const MAX_URL_LENGTH = 2048;

export type AppKind = 'confidential' | 'public' | 'device';
const KINDS: Record<AppKind, string> = {
  confidential: 'Confidential: a web app with a server that keeps a client secret',
  public: 'Public: a browser or native app, PKCE without a secret',
  device: 'Device: a command-line tool or TV that shows a code (the device flow, public)',
};

// C0 controls (a tab, a line break), DEL and C1 controls, refused in names as `chessport apps add` does.
const CONTROL = /[^\u0020-\u007e\u00a0-\u{10ffff}]/u;

/** A confidential client's secret: shown once, only its SHA-256 is kept. */
function newClientSecret(): { secret: string; hash: string } {
  const secret = `cps_${randomBytes(32).toString('base64url')}`;
  return { secret, hash: hashToken(secret) };
}

export function kindOf(app: App): AppKind | undefined {
  if (!app.oauth) return undefined;
  if (app.oauth.type === 'confidential') return 'confidential';
  return app.oauth.deviceFlow ? 'device' : 'public';
}

/** The console's pages: the check of who may use them, with the answer for those who may not. */
export function consoleGate(context: PagesContext) {
  /**
   * The developer of this request, or undefined once the answer is sent: 404 when the console is off, the
   * sign-in page for a browser not signed in (a GET comes back after it), 403 for a user not invited.
   */
  return async function developerOf(request: FastifyRequest, reply: FastifyReply): Promise<User | undefined> {
    const mode = context.settings.developerConsole;
    if (mode === 'off') {
      errorPage(reply, 404, 'Not found', 'There is no developer console on this server.');
      return undefined;
    }
    const user = await context.browsers.signedIn(request);
    if (!user) {
      const back = request.method === 'GET' ? request.url.split('?')[0] : DEVELOPERS_PATH;
      reply
        .code(303)
        .header('location', signInPath(back ?? DEVELOPERS_PATH))
        .send();
      return undefined;
    }
    if (mode === 'invite' && !(await context.store.accounts.isDeveloper(user.id))) {
      errorPage(
        reply,
        403,
        'Developer console',
        'The developer console is open to invited developers only. Ask the operator of this server to invite you.',
      );
      return undefined;
    }
    return user;
  };
}

/** The console's navigation, on each of its pages. */
export function consoleNav(user: User): Html {
  return html`<nav aria-label="Console"><ul>
<li><a href="${DEVELOPERS_PATH}">Your apps</a></li>
<li><a href="${DEVELOPERS_PATH}/apps/new">Register an app</a></li>
<li><a href="/account">Your account (${user.login})</a></li>
</ul></nav>`;
}

/** A POST's form when its CSRF token is this browser's; else the 403 is sent and undefined returned. */
export function csrfForm(
  context: PagesContext,
  request: FastifyRequest,
  reply: FastifyReply,
): URLSearchParams | undefined {
  const form = formOf(request);
  if (context.browsers.csrfValid(request, form.get('csrf') ?? undefined)) return form;
  errorPage(reply, 403, 'Developer console', WRONG_CSRF);
  return undefined;
}

/** The events' checkboxes, ticked as the endpoint subscribes (all, for a new one). */
export function eventBoxes(events: readonly SubscribableEvent[] | null, prefix: string) {
  return SUBSCRIBABLE_EVENTS.map(
    (
      e,
    ) => html`<p><input type="checkbox" id="${prefix}-${e}" name="events" value="${e}"${events === null || events.includes(e) ? html` checked` : ''}>
<label class="check" for="${prefix}-${e}"><code>${e}</code></label></p>
`,
  );
}

export function notFound(reply: FastifyReply): FastifyReply {
  return errorPage(reply, 404, 'Not found', 'There is no such app, endpoint or delivery of yours.');
}

interface AppForm {
  name: string;
  homepage: string;
  description: string;
  redirectUris: string;
  kind: string;
}

const EMPTY_FORM: AppForm = {
  name: '',
  homepage: '',
  description: '',
  redirectUris: '',
  kind: 'confidential',
};

/** The app form's values checked: what addApp takes, or the message that refuses them. */
function checkAppForm(values: AppForm):
  | {
      name: string;
      homepage?: string;
      description?: string;
      oauth: OAuthClient;
    }
  | { message: string } {
  const name = values.name.trim();
  if (name === '') return { message: 'Give the app a name.' };
  if (CONTROL.test(name)) return { message: 'The name must not hold control characters.' };
  if ([...name].length > MAX_NAME_LENGTH)
    return { message: `The name is at most ${MAX_NAME_LENGTH} characters.` };
  if (name.startsWith('deleted:') || name.startsWith('personal-tokens:')) {
    return {
      message: 'Names beginning with "deleted:" or "personal-tokens:" are kept for chessport itself.',
    };
  }
  const homepage = values.homepage.trim();
  if (homepage !== '') {
    const url = URL.parse(homepage);
    if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:') || homepage.length > MAX_URL_LENGTH) {
      return { message: 'The homepage must be an http or https URL, such as https://app.example.org.' };
    }
  }
  const description = values.description.trim();
  if ([...description].length > MAX_DESCRIPTION_LENGTH) {
    return { message: `The description is at most ${MAX_DESCRIPTION_LENGTH} characters.` };
  }
  if (!(values.kind in KINDS)) return { message: 'Choose the kind of app: confidential, public or device.' };
  const kind = values.kind as AppKind;
  const lines = values.redirectUris
    .split(/\r?\n/u)
    .map((line) => line.trim())
    .filter(Boolean);
  if (lines.length > MAX_REDIRECT_URIS) return { message: `At most ${MAX_REDIRECT_URIS} redirect URIs.` };
  let redirectUris: string[];
  try {
    redirectUris = [...new Set(lines.map((line) => checkRedirectUri(line, 'redirect_uri')))];
  } catch (error) {
    if (error instanceof RefusedRedirectUri) return { message: error.message };
    throw error;
  }
  if (kind !== 'device' && redirectUris.length === 0) {
    return { message: 'A confidential or public app needs a redirect URI, one a line.' };
  }
  const oauth: OAuthClient = {
    type: kind === 'confidential' ? 'confidential' : 'public',
    redirectUris,
    deviceFlow: kind === 'device',
  };
  return {
    name,
    ...(homepage !== '' && { homepage }),
    ...(description !== '' && { description }),
    oauth,
  };
}

export function developerRoutes(scope: FastifyInstance, context: PagesContext): void {
  const { store } = context;
  const developerOf = consoleGate(context);

  function appForm(
    request: FastifyRequest,
    reply: FastifyReply,
    user: User,
    status = 200,
    values: AppForm = EMPTY_FORM,
    message?: string,
  ): FastifyReply {
    const csrf = context.browsers.csrfToken(request, reply);
    const kinds = (Object.keys(KINDS) as AppKind[]).map(
      (
        kind,
      ) => html`<p><input type="radio" id="kind-${kind}" name="kind" value="${kind}"${values.kind === kind ? html` checked` : ''}>
<label class="check" for="kind-${kind}">${KINDS[kind]}</label></p>
`,
    );
    return sendPage(
      reply,
      status,
      'Register an app',
      html`${consoleNav(user)}
${message ? html`<p class="error" role="alert">${message}</p>` : ''}
<form method="post" action="${DEVELOPERS_PATH}/apps/new">
<input type="hidden" name="csrf" value="${csrf}">
<p><label for="name">Name</label>
<input type="text" id="name" name="name" value="${values.name}" maxlength="${MAX_NAME_LENGTH}" required></p>
<p><label for="homepage">Homepage (optional)</label>
<input type="url" id="homepage" name="homepage" value="${values.homepage}"></p>
<p><label for="description">Description (optional)</label>
<textarea id="description" name="description" rows="3">${values.description}</textarea></p>
<fieldset>
<legend>Kind</legend>
${kinds}</fieldset>
<p><label for="redirect_uri">Redirect URIs, one a line</label>
<textarea id="redirect_uri" name="redirect_uri" rows="3" aria-describedby="redirect-help">${values.redirectUris}</textarea></p>
<p id="redirect-help">https, or http on 127.0.0.1 or [::1] for an app on the user's own machine (any port then works). Not needed for a device app.</p>
<p><button type="submit">Register</button></p>
</form>`,
    );
  }

  /** The app's page; `secret`, when the app was just made or its secret rotated, is shown this once. */
  async function appPage(
    request: FastifyRequest,
    reply: FastifyReply,
    user: User,
    app: App,
    shown: { secret?: string; notice?: string } = {},
    status = 200,
  ): Promise<FastifyReply> {
    const csrf = context.browsers.csrfToken(request, reply);
    const endpoints = await store.webhooks.endpoints.list(app.id);
    const kind = kindOf(app);
    const base = `${DEVELOPERS_PATH}/apps/${app.id}`;
    const endpointRows = endpoints.map(
      (
        endpoint,
      ) => html`<li><a href="${DEVELOPERS_PATH}/webhooks/${endpoint.id}">${endpoint.url}</a> (${endpoint.disabledAt === null ? 'enabled' : 'disabled'})</li>
`,
    );
    return sendPage(
      reply,
      status,
      app.name,
      html`${consoleNav(user)}
${shown.notice ? html`<p class="notice" role="status">${shown.notice}</p>` : ''}
<dl>
<dt>Client id</dt>
<dd><code class="secret" data-testid="client-id">${app.id}</code></dd>
${
  shown.secret
    ? html`<dt>Client secret</dt>
<dd><code class="secret" data-testid="client-secret">${shown.secret}</code></dd>
<dd><strong>Copy it now: it is shown this once.</strong> Only its hash is kept.</dd>`
    : ''
}
<dt>Kind</dt>
<dd>${kind ? KINDS[kind] : 'no OAuth client'}</dd>
<dt>Redirect URIs</dt>
<dd>${app.oauth?.redirectUris.length ? html`<ul>${app.oauth.redirectUris.map((uri) => html`<li>${uri}</li>`)}</ul>` : 'none'}</dd>
${app.homepage ? html`<dt>Homepage</dt><dd>${app.homepage}</dd>` : ''}
${app.description ? html`<dt>Description</dt><dd>${app.description}</dd>` : ''}
<dt>Registered</dt>
<dd>${when(app.createdAt)}</dd>
</dl>
${
  kind === 'confidential'
    ? html`<h2>Client secret</h2>
<p>A new secret replaces this one; the current one keeps working for ${GRACE_WORDS} more, so that you can deploy the new one.${
        app.previousSecretUntil !== null
          ? html` The secret before the latest rotation works until ${when(app.previousSecretUntil)}; a new rotation ends it now.`
          : ''
      }</p>
<form method="post" action="${base}/secret">
<input type="hidden" name="csrf" value="${csrf}">
<p><button type="submit">Rotate the client secret</button></p>
</form>`
    : ''
}
<h2>Webhooks</h2>
${endpointRows.length > 0 ? html`<ul>${endpointRows}</ul>` : html`<p>No webhook endpoint yet.</p>`}
<form method="post" action="${base}/webhooks">
<input type="hidden" name="csrf" value="${csrf}">
<p><label for="url">Endpoint URL</label>
<input type="url" id="url" name="url" required aria-describedby="url-help"></p>
<p id="url-help">https, at a public address. Each delivery is signed (Standard Webhooks); the endpoint's secret is shown once.</p>
<fieldset>
<legend>Events it receives</legend>
${eventBoxes(null, 'new-events')}</fieldset>
<p><button type="submit">Add the endpoint</button></p>
</form>
<h2>Delete the app</h2>
<p>Deleting the app revokes every user's access to it and every token of it at once, and removes its webhook endpoints. It cannot be undone.</p>
<form method="post" action="${base}/delete">
<input type="hidden" name="csrf" value="${csrf}">
<p><button type="submit">Delete ${app.name}</button></p>
</form>`,
    );
  }

  scope.get(DEVELOPERS_PATH, async (request, reply) => {
    const user = await developerOf(request, reply);
    if (!user) return reply;
    const apps = await store.developers.apps(user.id);
    const { done } = request.query as { done?: string };
    const items = apps.map(
      (
        app,
      ) => html`<li><a href="${DEVELOPERS_PATH}/apps/${app.id}">${app.name}</a> (${kindOf(app) ?? 'no OAuth client'})</li>
`,
    );
    return sendPage(
      reply,
      200,
      'Developer console',
      html`${consoleNav(user)}
${done === 'deleted' ? html`<p class="notice" role="status">The app is deleted.</p>` : ''}
<h2>Your apps</h2>
${items.length > 0 ? html`<ul>${items}</ul>` : html`<p>You have registered no app yet.</p>`}
<p><a href="${DEVELOPERS_PATH}/apps/new">Register an app</a></p>`,
    );
  });

  scope.get(`${DEVELOPERS_PATH}/apps/new`, async (request, reply) => {
    const user = await developerOf(request, reply);
    if (!user) return reply;
    return appForm(request, reply, user);
  });

  scope.post(`${DEVELOPERS_PATH}/apps/new`, async (request, reply) => {
    const form = csrfForm(context, request, reply);
    if (!form) return reply;
    const user = await developerOf(request, reply);
    if (!user) return reply;
    const values: AppForm = {
      name: form.get('name') ?? '',
      homepage: form.get('homepage') ?? '',
      description: form.get('description') ?? '',
      redirectUris: form.get('redirect_uri') ?? '',
      kind: form.get('kind') ?? '',
    };
    const strict = strictForm(form, ['csrf', 'name', 'homepage', 'description', 'redirect_uri', 'kind']);
    const checked = strict ? { message: strict } : checkAppForm(values);
    if ('message' in checked) return appForm(request, reply, user, 400, values, checked.message);
    if ((await store.developers.apps(user.id)).length >= MAX_APPS_PER_DEVELOPER) {
      return appForm(
        request,
        reply,
        user,
        409,
        values,
        `You have ${MAX_APPS_PER_DEVELOPER} apps, the most one developer keeps: delete one first.`,
      );
    }
    const secret = checked.oauth.type === 'confidential' ? newClientSecret() : null;
    let app: App;
    try {
      app = await store.accounts.addApp({ ...checked, ownerId: user.id, clientSecretHash: secret?.hash });
    } catch (error) {
      if (!(error instanceof StoreError)) throw error;
      return appForm(
        request,
        reply,
        user,
        409,
        values,
        'An app with this name exists already: choose another name.',
      );
    }
    return appPage(
      request,
      reply,
      user,
      app,
      {
        secret: secret?.secret,
        notice: `${app.name} is registered.`,
      },
      201,
    );
  });

  scope.get(`${DEVELOPERS_PATH}/apps/:app`, async (request, reply) => {
    const user = await developerOf(request, reply);
    if (!user) return reply;
    const app = await store.developers.app(user.id, (request.params as { app: string }).app);
    if (!app) return notFound(reply);
    return appPage(request, reply, user, app);
  });

  scope.post(`${DEVELOPERS_PATH}/apps/:app/secret`, async (request, reply) => {
    const form = csrfForm(context, request, reply);
    if (!form) return reply;
    const user = await developerOf(request, reply);
    if (!user) return reply;
    const app = await store.developers.app(user.id, (request.params as { app: string }).app);
    if (!app) return notFound(reply);
    if (app.oauth?.type !== 'confidential') {
      return errorPage(reply, 400, app.name, 'Only a confidential app has a client secret.');
    }
    const secret = newClientSecret();
    if (!(await store.developers.rotateSecret(user.id, app.id, secret.hash, CLIENT_SECRET_GRACE_MS))) {
      return notFound(reply);
    }
    const rotated = (await store.developers.app(user.id, app.id)) ?? app;
    return appPage(request, reply, user, rotated, {
      secret: secret.secret,
      notice: `The client secret is rotated: the old one works for ${GRACE_WORDS} more.`,
    });
  });

  scope.post(`${DEVELOPERS_PATH}/apps/:app/delete`, async (request, reply) => {
    const form = csrfForm(context, request, reply);
    if (!form) return reply;
    const user = await developerOf(request, reply);
    if (!user) return reply;
    if (!(await store.developers.deleteApp(user.id, (request.params as { app: string }).app))) {
      return notFound(reply);
    }
    return reply.code(303).header('location', `${DEVELOPERS_PATH}?done=deleted`).send();
  });
}
