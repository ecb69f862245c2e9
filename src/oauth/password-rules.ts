// What a password may be: the CLI checks it when it is set, the sign-in form before it is verified.

/** The shortest password taken (NIST SP 800-63B's minimum). */
export const MIN_PASSWORD_LENGTH = 8;

/** The longest: it bounds the work one sign-in attempt can ask of scrypt. */
export const MAX_PASSWORD_LENGTH = 1024;
