// oidc-provider's storage adapter over the Store, on either dialect, so that every instance on one store
// shares all of it (a code issued by one is exchanged at another). Per model:
// - Client: read from the apps table (an app that is an OAuth client); clients are made by the CLI only.
// - AccessToken: a row of `tokens` (its SHA-256, user, app, scopes, expiry, grant), so that the API
//   authenticates it as any other token.
// - Grant: a row of `grants`. Grants do not expire: they last until the user, the operator or a replay
//   detection revokes them.
// - Session: an oauth_records row once it names a signed-in account, none before (below).
// - everything else (codes, refresh tokens, device codes, interactions): an oauth_records row
//   under the SHA-256 of its id. The id is not kept, except a device code's, which its user code finds
//   (and which lives ten minutes). A session or interaction names the user it signs in, so that a change of
//   the user's password ends it.
// Using a code or refresh token is atomic (consume): of two requests that race with one, on one instance or
// two, the second fails and revokes the grant, as a replay.
// An app that revokes one access token at /oauth/revoke revokes that token only (RFC 7009 leaves the rest to
// the server; docs/oauth.md says so): the provider would go on to revoke every token and code of its grant.

import type { Adapter, AdapterPayload } from 'oidc-provider';
import Provider, { errors } from 'oidc-provider';
import { SCOPES } from '../domain/scopes.ts';
import { type App, hashToken, type Store } from '../store/index.ts';

/** The provider's clock tolerance, which also keeps a record a little past its expiry. */
export const CLOCK_TOLERANCE_S = 15;

const seconds = (ms: number) => Math.floor(ms / 1000);

/**
 * Whether the request under way is an app revoking one of its access tokens at /oauth/revoke: the provider
 * has destroyed that token, and then asks for everything else of its grant to be revoked, which it is not.
 */
function revokingOneAccessToken(): boolean {
  const ctx = Provider.ctx;
  return ctx?.oidc?.route === 'revocation' && ctx.oidc.entities.AccessToken !== undefined;
}

/**
 * What makes an app an OAuth client, in the metadata names of RFC 7591. A confidential client's
 * `client_secret` holds the SHA-256 of each secret that works now, space-separated: the current one, and the
 * one before the latest rotation during its grace period (provider.ts compares against each).
 */
export function clientMetadata(app: App, secretHashes: string[]): AdapterPayload | undefined {
  const client = app.oauth;
  if (!client) return undefined;
  const grantTypes = [
    ...(client.redirectUris.length > 0 ? ['authorization_code'] : []),
    ...(client.deviceFlow ? ['urn:ietf:params:oauth:grant-type:device_code'] : []),
    'refresh_token',
  ];
  // A public client whose redirect URIs are all loopback ones is a native app (RFC 8252): any port of
  // them matches (section 7.3), and consent is asked every time, as any program on the machine may use it.
  const native =
    client.type === 'public' &&
    client.redirectUris.length > 0 &&
    client.redirectUris.every((uri) => new URL(uri).protocol === 'http:');
  return {
    client_id: app.id,
    client_name: app.name,
    application_type: native ? 'native' : 'web',
    redirect_uris: client.redirectUris,
    grant_types: grantTypes,
    response_types: client.redirectUris.length > 0 ? ['code'] : [],
    scope: SCOPES.join(' '),
    ...(client.type === 'public'
      ? { token_endpoint_auth_method: 'none' }
      : { token_endpoint_auth_method: 'client_secret_basic', client_secret: secretHashes.join(' ') }),
  };
}

function grantIdOf(payload: AdapterPayload): string | null {
  return typeof payload.grantId === 'string' ? payload.grantId : null;
}

/**
 * The user a record signs in, whose password change ends it (oauth-records.ts): a session's account, and an
 * interaction's once it has one (signed in, or begun by a signed-in session), which would sign its browser in
 * when resumed. Null for the rest: codes and tokens belong to grants.
 */
function signedInUserOf(model: string, payload: AdapterPayload): string | null {
  const ids =
    model === 'Session'
      ? [payload.accountId]
      : model === 'Interaction'
        ? [
            payload.result?.login?.accountId,
            payload.lastSubmission?.login?.accountId,
            payload.session?.accountId,
          ]
        : [];
  return ids.find((id): id is string => typeof id === 'string') ?? null;
}

export class StoreAdapter implements Adapter {
  private readonly model: string;
  private readonly store: Store;

  constructor(model: string, store: Store) {
    this.model = model;
    this.store = store;
  }

  async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
    const now = Date.now();
    switch (this.model) {
      case 'AccessToken': {
        const grantId = grantIdOf(payload);
        if (!grantId || !payload.accountId || !payload.clientId)
          throw new Error('access token without grant');
        const added = await this.store.oauth.grants.addToken({
          token: id,
          userId: payload.accountId,
          appId: payload.clientId,
          scopes: (payload.scope ?? '').split(' ').filter(Boolean),
          expiresAt: payload.exp ? payload.exp * 1000 : null,
          grantId,
          createdAt: payload.iat ? payload.iat * 1000 : now,
        });
        if (!added) throw new errors.InvalidGrant('grant revoked');
        return;
      }
      case 'Grant': {
        const { exp: _exp, iat: _iat, jti: _jti, ...kept } = payload;
        if (!payload.accountId || !payload.clientId) throw new Error('grant without account or client');
        const openid = payload.openid as { scope?: string } | undefined;
        await this.store.oauth.grants.save({
          id,
          userId: payload.accountId,
          appId: payload.clientId,
          scopes: (openid?.scope ?? '').split(' ').filter((s) => s && s !== 'openid'),
          payload: JSON.stringify(kept),
        });
        return;
      }
      case 'Client':
        throw new Error('clients are registered with the chessport CLI');
      case 'Session':
        // The provider saves a session for every browser that opens the device code page, signed in or not
        // (its form token), and for one whose cookie names a session gone. Until it names an account such a
        // session holds nothing to keep: the form token is the page's CSRF token, made again from the
        // browser's cookie on each request (provider.ts). So anonymous visits leave no row behind.
        if (typeof payload.accountId !== 'string') return;
        return this.saveRecord(id, payload, expiresIn, now);
      default:
        return this.saveRecord(id, payload, expiresIn, now);
    }
  }

  private async saveRecord(
    id: string,
    payload: AdapterPayload,
    expiresIn: number | undefined,
    now: number,
  ): Promise<void> {
    // A device code keeps its id, which findByUserCode must give back (see the head of this module).
    const { jti: _jti, consumed: _consumed, ...kept } = payload;
    const stored = this.model === 'DeviceCode' ? { ...kept, jti: id } : kept;
    await this.store.oauth.records.save(this.model, id, {
      payload: JSON.stringify(stored),
      grantId: grantIdOf(payload),
      uid: typeof payload.uid === 'string' ? payload.uid : null,
      userCode: typeof payload.userCode === 'string' ? payload.userCode : null,
      userId: signedInUserOf(this.model, payload),
      expiresAt: expiresIn ? now + (expiresIn + CLOCK_TOLERANCE_S) * 1000 : null,
    });
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    switch (this.model) {
      case 'Client': {
        const found = await this.store.accounts.findAppById(id);
        return found && clientMetadata(found.app, found.secretHashes);
      }
      case 'AccessToken': {
        const token = await this.store.tokens.findByHash(hashToken(id));
        if (!token || token.revokedAt !== null || token.grantId === null) return undefined;
        return {
          jti: id,
          kind: 'AccessToken',
          accountId: token.userId,
          clientId: token.appId,
          grantId: token.grantId,
          scope: token.scopes.join(' '),
          iat: seconds(token.createdAt),
          ...(token.expiresAt !== null && { exp: seconds(token.expiresAt) }),
          expiresWithSession: false,
        };
      }
      case 'Grant': {
        const found = await this.store.oauth.grants.find(id);
        return found && { ...(JSON.parse(found.payload) as AdapterPayload), jti: id, kind: 'Grant' };
      }
      default:
        return this.record('id', id, id);
    }
  }

  private async record(
    by: 'id' | 'uid' | 'user_code',
    value: string,
    id?: string,
  ): Promise<AdapterPayload | undefined> {
    const found = await this.store.oauth.records.find(this.model, by, value);
    if (!found) return undefined;
    const payload = JSON.parse(found.payload) as AdapterPayload;
    return {
      ...payload,
      ...(id !== undefined && { jti: id }),
      ...(found.consumedAt !== null && { consumed: seconds(found.consumedAt) }),
    };
  }

  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    return this.record('uid', uid);
  }

  async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
    return this.record('user_code', userCode);
  }

  async consume(id: string): Promise<void> {
    if (await this.store.oauth.records.consume(this.model, id)) return;
    // Used by another request meanwhile: a replay, whichever came first.
    const found = await this.store.oauth.records.find(this.model, 'id', id);
    const grantId = found && grantIdOf(JSON.parse(found.payload) as AdapterPayload);
    if (grantId) await this.store.oauth.grants.revoke(grantId);
    throw new errors.InvalidGrant(
      `${this.model === 'RefreshToken' ? 'refresh token' : 'grant'} already used`,
    );
  }

  async destroy(id: string): Promise<void> {
    switch (this.model) {
      case 'AccessToken':
        await this.store.tokens.revokeValue(id);
        return;
      case 'Grant':
        await this.store.oauth.grants.revoke(id);
        return;
      default:
        await this.store.oauth.records.delete(this.model, id);
    }
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    if (revokingOneAccessToken()) return;
    if (this.model === 'AccessToken') await this.store.oauth.grants.revokeTokens(grantId);
    else await this.store.oauth.records.deleteForGrant(this.model, grantId);
  }
}
