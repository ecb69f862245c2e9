// A third-party web app that uses chessport the way any other app would: it knows nothing of chessport's
// code, only its public metadata (RFC 8414) and API. It signs a user in with the authorization code flow and
// PKCE through oauth4webapi, an independent OAuth client library, then reads /me and /games with the access
// token, refreshes it, and says what the API answers when the user has taken the access back.
//
//   CHESSPORT_URL=http://127.0.0.1:8080 CLIENT_ID=... CLIENT_SECRET=... PORT=3000 node app.ts
//
// Without CLIENT_SECRET it is a public client (PKCE alone). Plain node:http, sessions in memory: an example,
// not a production app.
import { randomBytes } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import * as oauth from 'oauth4webapi';

const issuer = new URL(process.env.CHESSPORT_URL ?? 'http://127.0.0.1:8080');
const clientId = process.env.CLIENT_ID ?? '';
const clientSecret = process.env.CLIENT_SECRET;
const port = Number(process.env.PORT ?? 3000);
const host = process.env.HOST ?? '127.0.0.1';
const redirectUri = `http://${host}:${port}/callback`;
const scope = 'user.read games.read';

if (!clientId)
  throw new Error('set CLIENT_ID (chessport apps add <name> --redirect-uri <this app>/callback)');

// Plain http only for a chessport on this machine (the library refuses it otherwise).
const insecure = { [oauth.allowInsecureRequests]: issuer.protocol === 'http:' };
const client: oauth.Client = { client_id: clientId };
const clientAuth = clientSecret ? oauth.ClientSecretBasic(clientSecret) : oauth.None();

/** The authorization server's metadata, read once through RFC 8414 discovery. */
let server: Promise<oauth.AuthorizationServer> | undefined;
const metadata = () => {
  server ??= oauth
    .discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure })
    .then((response) => oauth.processDiscoveryResponse(issuer, response));
  return server;
};

interface Session {
  state?: string;
  verifier?: string;
  accessToken?: string;
  refreshToken?: string;
}
const sessions = new Map<string, Session>();

/**
 * Keeps a token answer in the session: the access token, and the refresh token, which replaces the one used
 * (chessport rotates refresh tokens: each works once).
 */
function keepTokens(session: Session, tokens: oauth.TokenEndpointResponse): void {
  session.accessToken = tokens.access_token;
  session.refreshToken = tokens.refresh_token;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function send(res: ServerResponse, status: number, title: string, body: string, headers = {}) {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', ...headers });
  res.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>
<body><h1>${escapeHtml(title)}</h1>${body}
<p><a href="/">Home</a> · <a href="/me">Me</a> · <a href="/games">Games</a> · <a href="/refresh">Refresh the token</a></p>
</body></html>`);
}

/**
 * A call to the chessport API with the session's access token: its status and JSON. A 401 or 403 comes as
 * the library's challenge error (RFC 6750's WWW-Authenticate), whose error code is taken from it.
 */
async function api(session: Session, path: string): Promise<{ status: number; body: unknown }> {
  try {
    const response = await oauth.protectedResourceRequest(
      session.accessToken ?? '',
      'GET',
      new URL(path, issuer),
      undefined,
      undefined,
      insecure,
    );
    return { status: response.status, body: await response.json().catch(() => null) };
  } catch (error) {
    if (!(error instanceof oauth.WWWAuthenticateChallengeError)) throw error;
    return { status: error.status, body: { error: error.cause[0]?.parameters.error ?? '' } };
  }
}

const app = createServer(async (req, res) => {
  const url = new URL(req.url ?? '/', redirectUri);
  const cookie = /(?:^|;\s*)sid=([\w-]+)/.exec(req.headers.cookie ?? '')?.[1];
  const sid = cookie && sessions.has(cookie) ? cookie : randomBytes(16).toString('base64url');
  const session = sessions.get(sid) ?? {};
  sessions.set(sid, session);
  const setCookie = { 'set-cookie': `sid=${sid}; HttpOnly; SameSite=Lax; Path=/` };
  try {
    const as = await metadata();
    switch (url.pathname) {
      case '/': {
        const status = session.accessToken ? 'Signed in with chessport.' : 'Not signed in.';
        return send(
          res,
          200,
          'Example app',
          `<p id="status">${status}</p><p><a id="login" href="/login">Sign in with chessport</a></p>`,
          setCookie,
        );
      }
      case '/login': {
        session.verifier = oauth.generateRandomCodeVerifier();
        session.state = oauth.generateRandomState();
        const authorize = new URL(as.authorization_endpoint ?? '');
        authorize.search = new URLSearchParams({
          client_id: clientId,
          redirect_uri: redirectUri,
          response_type: 'code',
          scope,
          state: session.state,
          code_challenge: await oauth.calculatePKCECodeChallenge(session.verifier),
          code_challenge_method: 'S256',
        }).toString();
        res.writeHead(303, { location: authorize.href, ...setCookie });
        return res.end();
      }
      case '/callback': {
        let params: URLSearchParams;
        try {
          params = oauth.validateAuthResponse(as, client, url, session.state);
        } catch (error) {
          const code = error instanceof oauth.AuthorizationResponseError ? error.error : String(error);
          return send(res, 200, 'Not signed in', `<p id="error">chessport answered: ${escapeHtml(code)}</p>`);
        }
        const response = await oauth.authorizationCodeGrantRequest(
          as,
          client,
          clientAuth,
          params,
          redirectUri,
          session.verifier ?? '',
          insecure,
        );
        keepTokens(session, await oauth.processAuthorizationCodeResponse(as, client, response));
        res.writeHead(303, { location: '/me' });
        return res.end();
      }
      case '/me':
      case '/games': {
        const { status, body } = await api(session, url.pathname === '/me' ? '/api/v1/me' : '/api/v1/games');
        if (status !== 200) {
          const error = (body as { error?: string } | null)?.error ?? '';
          return send(
            res,
            200,
            'API error',
            `<p id="api-status">${status}</p><p id="api-error">${escapeHtml(error)}</p>`,
          );
        }
        if (url.pathname === '/me') {
          const me = (body as { data: { id: string; name: string | null } }).data;
          return send(
            res,
            200,
            'Me',
            `<p id="api-status">200</p><p id="me">${escapeHtml(me.name ?? me.id)}</p>`,
          );
        }
        const games = (body as { data: { white: { name: string | null }; black: { name: string | null } }[] })
          .data;
        const items = games
          .map((g) => `<li>${escapeHtml(`${g.white.name} – ${g.black.name}`)}</li>`)
          .join('');
        return send(res, 200, 'Games', `<p id="api-status">200</p><ul id="games">${items}</ul>`);
      }
      case '/refresh': {
        try {
          const response = await oauth.refreshTokenGrantRequest(
            as,
            client,
            clientAuth,
            session.refreshToken ?? '',
            insecure,
          );
          keepTokens(session, await oauth.processRefreshTokenResponse(as, client, response));
          return send(res, 200, 'Refreshed', '<p id="refresh">refreshed</p>');
        } catch (error) {
          const code = error instanceof oauth.ResponseBodyError ? error.error : String(error);
          return send(
            res,
            200,
            'Refresh failed',
            `<p id="refresh">failed</p><p id="refresh-error">${escapeHtml(code)}</p>`,
          );
        }
      }
      default:
        return send(res, 404, 'Not found', '');
    }
  } catch (error) {
    return send(res, 500, 'Error', `<p id="error">${escapeHtml(String(error))}</p>`);
  }
});

app.listen(port, host, () => {
  const address = app.address();
  const listening = typeof address === 'object' && address ? address.port : port;
  console.log(`example app listening at http://${host}:${listening}`);
});
