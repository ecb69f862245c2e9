// How a sync without a token of the operator's gets one: through the device flow (--login: the user allows
// the sync's app in a browser), or from the sign-in a run kept beside the mirror (saved-sign-in.ts). Either
// way the access token is refreshed as the run needs it, and every new pair is saved before it is used.
import {
  ChessportOAuthError,
  OAuthTokens,
  startDeviceAuthorization,
  type TokenSource,
} from '@chessport/client';
import { SYNC_SCOPES, SyncError } from './errors.ts';
import { readSignIn, type SavedSignIn, writeSignIn } from './saved-sign-in.ts';

/** What --login needs. */
export interface LoginOptions {
  /** The client id of the server's app for the sync; default: that of the sign-in kept in the folder. */
  clientId?: string | undefined;
  /** Told where and with which code the user signs in, once the server has given the code. */
  onPrompt: (prompt: LoginPrompt) => void;
}

/** Where the user goes to allow the sync (RFC 8628 3.3). */
export interface LoginPrompt {
  verificationUri: string;
  /** The same page with the code in it, when the server gives one. */
  verificationUriComplete: string | null;
  userCode: string;
  /** When the code expires, in milliseconds since the epoch. */
  expiresAt: number;
}

interface Http {
  fetch?: typeof fetch | undefined;
  userAgent?: string | undefined;
}

const NOTHING = 'The mirror is as it was.';

/** The run's TokenSource once login() or load() has found the tokens; keep() starts saving them. */
export class SyncSignIn implements TokenSource {
  readonly file: string;
  readonly #http: Http;
  #tokens: OAuthTokens | undefined;
  #about: Omit<SavedSignIn, 'tokens'> | undefined;
  #keeping = false;

  constructor(file: string, http: Http) {
    this.file = file;
    this.#http = http;
  }

  /** The saved sign-in, which must be for this API: its tokens are sent nowhere else. Saved as it changes. */
  load(apiBase: string): void {
    const saved = readSignIn(this.file);
    if (!saved)
      throw new Error(
        `no token: give one with --token or CHESSPORT_TOKEN, or sign in with --login --client-id <id> (there is no ${this.file})`,
      );
    if (saved.apiBase !== apiBase)
      throw new SyncError(
        'other_server',
        `${this.file} holds a sign-in at ${saved.apiBase}, not ${apiBase}, and its tokens are not sent ` +
          `elsewhere. ${NOTHING} Sign in at this server with --login, or use another --out folder.`,
      );
    this.#use(saved);
    this.#keeping = true;
  }

  /** The device flow: asks the server for a code, tells `onPrompt`, and waits until the user has answered. */
  async login(apiBase: string, options: LoginOptions, signal: AbortSignal | undefined): Promise<void> {
    const clientId = options.clientId ?? savedClientId(this.file);
    if (clientId === undefined)
      throw new Error(
        '--login needs --client-id <id>: the client id of the server’s app for chessport sync, which its ' +
          'operator registers with `chessport apps add "chessport sync" --device --public`',
      );
    const http = { fetch: this.#http.fetch, userAgent: this.#http.userAgent };
    try {
      const started = await startDeviceAuthorization({
        issuer: apiBase,
        clientId,
        scope: SYNC_SCOPES,
        signal,
        ...http,
      });
      options.onPrompt({
        verificationUri: started.verificationUri,
        verificationUriComplete: started.verificationUriComplete,
        userCode: started.userCode,
        expiresAt: started.expiresAt,
      });
      const tokens = await started.tokens({ signal });
      this.#use({ apiBase, tokenEndpoint: started.tokenEndpoint, clientId, tokens });
    } catch (error) {
      if (signal?.aborted) throw error;
      throw loginFailure(error, clientId);
    }
  }

  /** From now on the tokens are saved in the file: now, and at every refresh. */
  keep(): void {
    if (this.#keeping) return;
    this.#keeping = true;
    this.#save();
  }

  accessToken(): Promise<string> {
    return this.#current().accessToken();
  }

  refresh(rejected: string): Promise<string> {
    return this.#current().refresh(rejected);
  }

  #use(signIn: SavedSignIn): void {
    const { tokens, ...about } = signIn;
    this.#about = about;
    this.#tokens = new OAuthTokens({
      tokenEndpoint: about.tokenEndpoint,
      clientId: about.clientId,
      tokens,
      ...this.#http,
      // The new pair is on disk before the run sends its access token: the old refresh token is spent.
      onTokens: () => {
        if (this.#keeping) this.#save();
      },
    });
  }

  #save(): void {
    writeSignIn(this.file, {
      ...(this.#about as Omit<SavedSignIn, 'tokens'>),
      tokens: this.#current().tokens,
    });
  }

  #current(): OAuthTokens {
    if (!this.#tokens) throw new Error('the sign-in has not been loaded');
    return this.#tokens;
  }
}

/** The client id of the folder's sign-in, if there is a readable one: --login again needs no --client-id. */
function savedClientId(file: string): string | undefined {
  try {
    return readSignIn(file)?.clientId;
  } catch {
    return undefined;
  }
}

/** What the user is told when the device flow ends without tokens. */
function loginFailure(error: unknown, clientId: string): unknown {
  if (!(error instanceof ChessportOAuthError)) return error;
  const said = `${error.error}${error.error_description ? `: ${error.error_description}` : ''}`;
  switch (error.error) {
    case 'access_denied':
      return new SyncError(
        'login_denied',
        `the sign-in was denied (${said}): the sync has no token. ${NOTHING}`,
        { cause: error },
      );
    case 'expired_token':
    case 'invalid_grant':
      return new SyncError(
        'login_expired',
        `the code expired before the sign-in was allowed (${said}). ${NOTHING} Run again with --login for a ` +
          'new code.',
        { cause: error },
      );
    case 'invalid_client':
    case 'unauthorized_client':
      return new Error(
        `the server refuses client id ${clientId} for the device flow (${said}): ask its operator for the ` +
          'client id of the app for chessport sync, registered with ' +
          '`chessport apps add "chessport sync" --device --public`',
        { cause: error },
      );
    case 'unexpected_response':
      return new Error(
        `the server offers no sign-in through the device flow: ${error.message}. Use --token.`,
        {
          cause: error,
        },
      );
    default:
      return new Error(`the sign-in failed: ${error.message}`, { cause: error });
  }
}
