// The OAuth 2.0 authorization server: oidc-provider (OpenID Certified; docs/oauth.md says why this library),
// configured for the API's three scopes. It does the protocol: the authorization code grant with PKCE (S256
// only, for every client), exact redirect URIs (RFC 8252's any-port loopback rule for native apps), refresh
// token rotation with reuse detection, the device authorization grant (RFC 8628), token revocation (RFC
// 7009) and the server metadata (RFC 8414). This module only sets it up: storage (adapter.ts), who the users
// are, when to ask them (interactions.ts renders the pages), how long things live, and the HTML it renders
// itself (the device code pages and error pages), in the same layout as the others.
import { generateKeyPairSync, hkdfSync, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import Provider, {
  type Configuration,
  type FindAccount,
  type Grant,
  interactionPolicy,
  type KoaContextWithOIDC,
} from 'oidc-provider';
import { SCOPES } from '../domain/scopes.ts';
import { hashToken, type Store } from '../store/index.ts';
import { CLOCK_TOLERANCE_S, StoreAdapter } from './adapter.ts';
import { type Browsers, SIGN_IN_TTL_S } from './browser.ts';
import { html, page } from './html.ts';
import type { OAuthSettings } from './settings.ts';

/** Where the provider's endpoints are, all under /oauth but its metadata. */
export const OAUTH_ROUTES = {
  authorization: '/oauth/authorize',
  token: '/oauth/token',
  revocation: '/oauth/revoke',
  device_authorization: '/oauth/device/auth',
  code_verification: '/oauth/device',
  jwks: '/oauth/jwks',
  // Switched off below, but the provider wants a path for each.
  userinfo: '/oauth/userinfo',
  introspection: '/oauth/introspect',
  end_session: '/oauth/session/end',
  registration: '/oauth/register',
  pushed_authorization_request: '/oauth/par',
  backchannel_authentication: '/oauth/backchannel',
  challenge: '/oauth/challenge',
  credential: '/oauth/credential',
};

/** Where the sign-in and consent pages of an authorization request are (interactions.ts). */
export const interactionPath = (uid: string) => `/oauth/interaction/${uid}`;

/** A key for a purpose, derived from the server secret: every instance that shares the secret has it. */
export function derivedKey(secret: string, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, 'chessport', purpose, 32));
}

/** Seconds of the device flow: how long a user code is good for, and how often a device may ask. */
const DEVICE_CODE_TTL_S = 600;
const CODE_TTL_S = 60;
const INTERACTION_TTL_S = 3600;

export interface ProviderOptions {
  store: Store;
  issuer: string;
  secret: string;
  settings: OAuthSettings;
  browsers: Browsers;
  log: { error(details: object, message: string): void };
  /** Told of each user code entered on the device code page that names no device code (index.ts keeps it counted). */
  wrongUserCode?: (request: IncomingMessage) => Promise<void>;
  /** The token of the device code page's forms for a request: its browser's page CSRF token (index.ts). */
  deviceFormToken?: (request: IncomingMessage) => string | undefined;
}

export function createProvider(options: ProviderOptions): Provider {
  const { store, settings, browsers } = options;
  const secure = options.issuer.startsWith('https:');

  const findAccount: FindAccount = async (_ctx, id) => {
    const user = await store.accounts.getUserById(id);
    return user && { accountId: user.id, claims: async () => ({ sub: user.id }) };
  };

  // The login prompt also comes when the browser is not signed in to chessport as the provider's session
  // says: after signing out of /account, an app cannot get a code from the provider's session alone.
  const policy = interactionPolicy.base();
  policy.get('login')?.checks.add(
    new interactionPolicy.Check(
      'chessport_sign_in',
      'the user is not signed in to chessport',
      'login_required',
      async (ctx) => {
        const user = await browsers.userOf(ctx.cookies.get(browsers.sessionCookie, { signed: false }));
        return user === undefined || user.id !== ctx.oidc.session?.accountId;
      },
    ),
  );

  // The keys of ID tokens, which are never issued (the openid scope is not one of the clients'); the
  // provider wants one.
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const signingKey = { ...privateKey.export({ format: 'jwk' }), alg: 'ES256', use: 'sig' };

  const configuration: Configuration = {
    adapter: (model: string) => new StoreAdapter(model, store),
    findAccount,
    scopes: [...SCOPES],
    responseTypes: ['code'],
    clientAuthMethods: ['none', 'client_secret_basic', 'client_secret_post'],
    clientDefaults: {
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
      id_token_signed_response_alg: 'ES256',
    },
    enabledJWA: { idTokenSigningAlgValues: ['ES256'] },
    jwks: { keys: [signingKey] },
    clockTolerance: CLOCK_TOLERANCE_S,
    // A redirect URI is always sent, and always matched exactly.
    allowOmittingSingleRegisteredRedirectUri: false,
    pkce: { required: () => true },
    features: {
      devInteractions: { enabled: false },
      // Tokens are bearer tokens, sent as the API takes them; requests come through the browser.
      dPoP: { enabled: false },
      pushedAuthorizationRequests: { enabled: false },
      // One resource, the API: its tokens carry its scopes and no audience.
      resourceIndicators: { enabled: false },
      userinfo: { enabled: false },
      introspection: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      revocation: {
        enabled: true,
        // A client revokes its own tokens only.
        allowedPolicy: async (_ctx, client, token) => token.clientId === client.clientId,
      },
      deviceFlow: {
        enabled: true,
        charset: 'base-20',
        mask: '****-****',
        userCodeInputSource: async (ctx, _form, _out, error) => {
          // The provider looked the code up and found no device code (its NotFoundError, which it answers
          // with this page): a guess, or a typo, whose count the code entry throttle keeps.
          if ((error as ReRenderError | undefined)?.name === 'NotFoundError') {
            await options.wrongUserCode?.(ctx.req);
          }
          deviceCodePage(ctx, error);
        },
        userCodeConfirmSource: async (ctx, _form, client, _deviceInfo, userCode) => {
          deviceConfirmPage(ctx, client.clientName ?? client.clientId, userCode);
        },
        successSource: async (ctx) => {
          htmlAnswer(
            ctx,
            page(
              'Device connected',
              html`<p class="notice" role="status">${ctx.oidc.client?.clientName ?? 'The app'} on your device now has the access you allowed. You can return to the device.</p>
<p><a href="/account">See the apps connected to your account</a></p>`,
            ),
          );
        },
      },
    },
    ttl: {
      AccessToken: settings.accessTokenTtlS,
      AuthorizationCode: CODE_TTL_S,
      DeviceCode: DEVICE_CODE_TTL_S,
      RefreshToken: settings.refreshTokenTtlS,
      Interaction: INTERACTION_TTL_S,
      Session: SIGN_IN_TTL_S,
      // Kept for the provider's checks; the store keeps grants until they are revoked (adapter.ts).
      Grant: 10 * 365 * 86_400,
      IdToken: 3600,
    },
    rotateRefreshToken: true,
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    expiresWithSession: async () => false,
    // One grant per user and app: a new authorization adds to it, and revoking it ends all of the app's access.
    loadExistingGrant: async (ctx) => {
      const { client, session, result, provider } = ctx.oidc;
      if (!client) return undefined;
      const accountId = session?.accountId;
      const fromConsent = (result?.consent as { grantId?: string } | undefined)?.grantId;
      const active = accountId
        ? (await store.oauth.grants.active(client.clientId, accountId))?.id
        : undefined;
      const id = fromConsent ?? active;
      return id ? ((await provider.Grant.find(id)) as Grant | undefined) : undefined;
    },
    interactions: {
      url: async (_ctx, interaction) => interactionPath(interaction.uid),
      policy,
    },
    cookies: {
      keys: [derivedKey(options.secret, 'oauth cookies').toString('base64url')],
      names: {
        session: 'chessport_oauth_session',
        interaction: 'chessport_oauth_interaction',
        resume: 'chessport_oauth_resume',
      },
      long: { httpOnly: true, sameSite: 'lax', secure },
      short: { httpOnly: true, sameSite: 'lax', secure },
    },
    routes: OAUTH_ROUTES,
    discovery: { service_documentation: `${options.issuer}/docs` },
    // A browser app (a public client) may call the token, revocation and device endpoints from its origins.
    clientBasedCORS: (_ctx, origin, client) =>
      client.clientAuthMethod === 'none' &&
      (client.redirectUris ?? []).some((uri) => originOfRedirect(uri, origin)),
    renderError: async (ctx, out) => {
      htmlAnswer(ctx, page('Something went wrong', errorBody(out.error, out.error_description)));
    },
  };

  const provider = new Provider(options.issuer, configuration);
  // The provider sees every request as addressed to the issuer (index.ts sets the forwarded headers).
  provider.proxy = true;
  deviceFormsWithoutState(provider, options.deviceFormToken ?? (() => undefined));
  // A confidential client's secret is kept as its SHA-256 (adapter.ts puts the hash where the secret goes).
  // During a rotation's grace period two secrets work: the metadata holds both hashes (adapter.ts).
  provider.Client.prototype.compareClientSecret = async function compare(actual: string) {
    const got = Buffer.from(hashToken(actual), 'hex');
    let right = false;
    for (const hash of String(this.clientSecret ?? '').split(' ')) {
      const want = Buffer.from(hash, 'hex');
      if (want.length === got.length && timingSafeEqual(want, got)) right = true;
    }
    return right;
  };
  revocationAnswersJson(provider);
  metadataWithoutOpenId(provider);
  provider.on('server_error', (_ctx: unknown, error: Error) => {
    options.log.error({ err: error }, 'oauth: request failed');
  });
  return provider;
}

/**
 * Whether a browser page at `origin` is one that the redirect URI names: the same origin, or, for a loopback
 * redirect URI (http on 127.0.0.1 or [::1]), the same address on any port, as the redirect itself may use any
 * port (RFC 8252 section 7.3): a native app's local page calls the token endpoint from the port it listens on.
 */
export function originOfRedirect(redirectUri: string, origin: string): boolean {
  const uri = URL.parse(redirectUri);
  if (!uri) return false;
  if (uri.origin === origin) return true;
  const from = URL.parse(origin);
  return (
    uri.protocol === 'http:' &&
    (uri.hostname === '127.0.0.1' || uri.hostname === '[::1]') &&
    from !== null &&
    from.protocol === 'http:' &&
    from.hostname === uri.hostname &&
    from.origin === origin
  );
}

/**
 * What the metadata (RFC 8414) would say of OpenID Connect, which is off (no ID tokens, no userinfo): the
 * provider lists it all the same. Ids are pairwise, never `public` subjects.
 */
const OPENID_ONLY_METADATA = [
  'subject_types_supported',
  'id_token_signing_alg_values_supported',
  'claims_supported',
  'claim_types_supported',
  'claims_parameter_supported',
  'request_uri_parameter_supported',
];

/** The metadata without OpenID Connect's fields, and without `openid` among the scopes. */
function metadataWithoutOpenId(provider: Provider): void {
  provider.use(async (ctx, next) => {
    await next();
    if (ctx.oidc?.route !== 'discovery' || typeof ctx.body !== 'object' || ctx.body === null) return;
    const metadata = ctx.body as Record<string, unknown>;
    for (const key of OPENID_ONLY_METADATA) delete metadata[key];
    if (Array.isArray(metadata.scopes_supported)) {
      metadata.scopes_supported = metadata.scopes_supported.filter((scope) => scope !== 'openid');
    }
  });
}

/**
 * A revocation (RFC 7009) is answered 200 with a body that the client ignores: the provider's is empty text,
 * which clients that read every answer as JSON refuse (simple-oauth2's revokeAll() throws after revoking the
 * access token, so the refresh token, and the grant, would live on). It is answered `{}` as JSON instead.
 */
function revocationAnswersJson(provider: Provider): void {
  provider.use(async (ctx, next) => {
    await next();
    if (ctx.oidc?.route === 'revocation' && ctx.status === 200 && !ctx.body) {
      ctx.type = 'application/json';
      ctx.body = '{}';
    }
  });
}

/**
 * The provider keeps the token of its device code forms in its session of the browser (`state.secret`), which
 * would make every visit to /oauth/device a session kept 12 hours, signed in or not. Here the token is the page
 * CSRF token of the browser's cookie (browser.ts) instead, which a request brings with it: the session's `state`
 * reads it, and what the provider writes there (a fresh token per page, the clean-up after a code is
 * confirmed) is dropped. A session without an account then holds nothing worth keeping, and the adapter keeps
 * none (adapter.ts). Sessions of other requests keep their own state.
 */
function deviceFormsWithoutState(
  provider: Provider,
  formToken: (request: IncomingMessage) => string | undefined,
): void {
  const sessions = provider.Session;
  const load = sessions.get.bind(sessions);
  sessions.get = async (ctx) => {
    const session = await load(ctx);
    // The provider's error pages change a session after its session middleware has saved it, then save it
    // again with that save's expiry (persist), which a session never saved (a request without one) lacks: it
    // gets the expiry a save gives it.
    if (typeof session.exp !== 'number') session.exp = Math.floor(Date.now() / 1000) + SIGN_IN_TTL_S;
    const secret = formToken(ctx.req);
    if (secret !== undefined) {
      Object.defineProperty(session, 'state', {
        get: () => ({ secret }),
        set: () => undefined,
        // Not in what a save of the session writes.
        enumerable: false,
        configurable: true,
      });
    }
    return session;
  };
}

function htmlAnswer(ctx: KoaContextWithOIDC, body: string): void {
  ctx.type = 'html';
  ctx.body = body;
}

const ERROR_WORDS: Record<string, string> = {
  invalid_request: 'The app sent a request that cannot be answered.',
  invalid_client: 'The app is not known here.',
  invalid_redirect_uri: 'The app asked to send you to an address it has not registered.',
  access_denied: 'The request was denied.',
  invalid_scope: 'The app asked for access that cannot be given.',
};

export function errorBody(error: string | undefined, description: string | undefined) {
  const words = (error && ERROR_WORDS[error]) ?? 'The request could not be completed.';
  return html`<p class="error" role="alert">${words}</p>
<p>Details for the app’s developer: <code>${error ?? 'server_error'}</code>${description ? html`: ${description}` : ''}</p>
<p>Go back to the app and try again.</p>`;
}

interface ReRenderError {
  name?: string;
  userCode?: string;
}

function deviceCodePage(ctx: KoaContextWithOIDC, error?: ReRenderError): void {
  const xsrf = (ctx.oidc.session?.state as { secret?: string } | undefined)?.secret ?? '';
  let message = html`<p>Enter the code your device or command-line tool shows.</p>`;
  if (error?.name === 'AbortedError') {
    message = html`<p class="notice" role="status">The request was cancelled: the device gets no access.</p>`;
  } else if (error?.name === 'NoCodeError' || error?.userCode !== undefined) {
    message = html`<p class="error" role="alert">That code is wrong, has expired or has been used. Check it and try again.</p>`;
  } else if (error) {
    message = html`<p class="error" role="alert">The code could not be checked. Try again.</p>`;
  }
  htmlAnswer(
    ctx,
    page(
      'Connect a device',
      html`${message}
<form method="post" action="${OAUTH_ROUTES.code_verification}">
<input type="hidden" name="xsrf" value="${xsrf}">
<p><label for="user_code">Code</label>
<input type="text" id="user_code" name="user_code" autocomplete="off" autocapitalize="characters" spellcheck="false" required autofocus></p>
<p><button type="submit">Continue</button></p>
</form>`,
    ),
  );
}

function deviceConfirmPage(ctx: KoaContextWithOIDC, app: string, userCode: string): void {
  const xsrf = (ctx.oidc.session?.state as { secret?: string } | undefined)?.secret ?? '';
  htmlAnswer(
    ctx,
    page(
      'Connect a device',
      html`<p><strong>${app}</strong> asks to connect a device to your account.</p>
<p>Check that the device shows this code:</p>
<p class="code">${userCode}</p>
<p>If it does not, or you did not start this, cancel.</p>
<form method="post" action="${OAUTH_ROUTES.code_verification}">
<input type="hidden" name="xsrf" value="${xsrf}">
<input type="hidden" name="user_code" value="${userCode}">
<p><button type="submit" name="confirm" value="yes">Continue</button>
<button type="submit" name="abort" value="yes">Cancel</button></p>
</form>`,
    ),
  );
}
