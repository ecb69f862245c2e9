// The package's version, for the default User-Agent: the client imports no file but its own modules, so not
// package.json either. test/client/options.test.ts checks that the two agree.

/** The version of @chessport/client. */
export const VERSION = '0.1.0';
