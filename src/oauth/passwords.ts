// Password hashes: scrypt (memory-hard, in Node's crypto), stored in PHC string form with their parameters,
// so that hashes made with other parameters still verify after these change. A password is never logged or
// stored in the clear.
import { randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from 'node:crypto';

/** N = 2^15, r = 8, p = 1: 128 * N * r = 32 MiB of memory per hash (OWASP's scrypt parameters or more). */
const COST_LOG2 = 15;
const BLOCK_SIZE = 8;
const PARALLELISM = 1;
const KEY_BYTES = 32;
const SALT_BYTES = 16;

export { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from './password-rules.ts';

function derive(password: string, salt: Buffer, log2: number, r: number, p: number): Promise<Buffer> {
  const N = 2 ** log2;
  // scrypt refuses to use more than maxmem (32 MiB by default), and needs 128 * N * r bytes and a little.
  const options: ScryptOptions = { N, r, p, maxmem: 256 * N * r };
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFC'), salt, KEY_BYTES, options, (error, key) =>
      error ? reject(error) : resolve(key),
    ),
  );
}

/** `$scrypt$ln=15,r=8,p=1$<salt>$<hash>`, base64 without padding (the PHC string format). */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, COST_LOG2, BLOCK_SIZE, PARALLELISM);
  const b64 = (bytes: Buffer) => bytes.toString('base64').replace(/=+$/, '');
  return `$scrypt$ln=${COST_LOG2},r=${BLOCK_SIZE},p=${PARALLELISM}$${b64(salt)}$${b64(key)}`;
}

const PHC = /^\$scrypt\$ln=([0-9]{1,2}),r=([0-9]{1,2}),p=([0-9]{1,2})\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/;

/**
 * Whether the password matches the hash. With no hash (an unknown login, a user without a password) it
 * still runs scrypt once, against a hash made at start, and says no: a wrong login costs the time a wrong
 * password does.
 */
export async function verifyPassword(password: string, hash: string | null): Promise<boolean> {
  dummyHash ??= hashPassword(randomBytes(16).toString('hex'));
  const parts = PHC.exec(hash ?? (await dummyHash));
  if (!parts) {
    await verifyPassword(password, null);
    return false;
  }
  const [, log2, r, p, salt, expected] = parts as unknown as [string, string, string, string, string, string];
  const want = Buffer.from(expected, 'base64');
  const got = await derive(password, Buffer.from(salt, 'base64'), Number(log2), Number(r), Number(p));
  return hash !== null && want.length === got.length && timingSafeEqual(want, got);
}

/** A hash of a random password, made on the first sign-in, for the logins that have none. */
let dummyHash: Promise<string> | undefined;
