// The scopes a token may carry (spec "Authentication"): what the API checks, the OAuth server grants and the
// operator issues.
export const SCOPES = ['user.read', 'databases.read', 'games.read'] as const;
export type Scope = (typeof SCOPES)[number];
