// The store's URL: checked before the store opens, and as the CLI prints it (a PostgreSQL URL may carry a
// password, which never goes to a terminal, a log or a script's JSON).
import { statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { DEFAULT_DATABASE_URL } from '../store/index.ts';
import { CliError } from './errors.ts';
import { inWorkingFolder } from './io.ts';

/**
 * The URL with its passwords (if any) replaced by `***`: the user's, and the value of every query parameter
 * whose name holds "password" (pg takes `?password=` and `?sslpassword=`, as libpq does); a SQLite path as it is.
 */
export function maskUrl(url: string): string {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) return url;
  const masked = maskQueryPasswords(url);
  try {
    const parsed = new URL(masked);
    if (parsed.password === '') return masked;
    parsed.password = '***';
    return parsed.toString();
  } catch {
    // Not a URL that parses: hide anything between the scheme's "//" and an "@".
    return masked.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@]*:)[^@]*@/i, '$1***@');
  }
}

/** Each `name=value` of the query whose name, decoded as pg decodes it, holds "password": its value as `***`. */
function maskQueryPasswords(url: string): string {
  const start = url.indexOf('?');
  if (start === -1) return url;
  const hash = url.indexOf('#', start);
  const end = hash === -1 ? url.length : hash;
  const params = url
    .slice(start + 1, end)
    .split('&')
    .map((param) => {
      const eq = param.indexOf('=');
      if (eq === -1) return param;
      const name = param.slice(0, eq);
      let decoded = name;
      try {
        decoded = decodeURIComponent(name.replaceAll('+', ' '));
      } catch {}
      return /password/i.test(decoded) ? `${name}=***` : param;
    });
  return `${url.slice(0, start + 1)}${params.join('&')}${url.slice(end)}`;
}

/** The demo's store, unless one is named. */
export const DEMO_STORE = 'data/demo.sqlite';

const ACCEPTED = 'a SQLite file path (like data/chessport.sqlite) or a postgres:// (postgresql://) URL';

/**
 * Refuses a store URL that openStore would misread: another scheme (mysql://x became a SQLite file
 * "mysql:/x"), a folder, or a file in a folder that does not exist. Only the default stores' folder (data/)
 * is created; a named one must exist, so that a mistyped path fails rather than starts an empty store.
 */
export function checkStoreUrl(url: string): void {
  if (/^postgres(ql)?:\/\//i.test(url)) return;
  const scheme = /^([a-z][a-z0-9+.-]+):/i.exec(url)?.[1];
  if (scheme !== undefined && scheme !== 'sqlite') {
    throw new CliError(`unsupported store "${maskUrl(url)}": give ${ACCEPTED}`);
  }
  const [file] = sqliteFiles(url);
  if (file === undefined) return;
  const info = statSync(inWorkingFolder(file), { throwIfNoEntry: false });
  if (info?.isDirectory()) {
    throw new CliError(
      `the store ${file} is a folder: name a SQLite file in it, like ${join(file, 'chessport.sqlite')}`,
    );
  }
  if (info || [DEFAULT_DATABASE_URL, DEMO_STORE].includes(url)) return;
  const folder = dirname(file);
  const parent = statSync(inWorkingFolder(folder), { throwIfNoEntry: false });
  if (!parent)
    throw new CliError(`the folder ${folder} of the store ${file} does not exist: create it first`);
  if (!parent.isDirectory())
    throw new CliError(`the store ${file} is under ${folder}, which is not a folder`);
}

/** The files of a SQLite store (the database, its WAL, shared memory and journal); none for PostgreSQL. */
export function sqliteFiles(url: string): string[] {
  if (/^postgres(ql)?:\/\//i.test(url)) return [];
  const file = url.replace(/^sqlite:(\/\/)?/, '');
  return file === ':memory:' ? [] : [file, `${file}-wal`, `${file}-shm`, `${file}-journal`];
}

/** The store URL as openStore is to read it: a SQLite file's relative path from the working folder (io.ts). */
export function storeUrlInWorkingFolder(url: string): string {
  const [file] = sqliteFiles(url);
  if (file === undefined) return url;
  return `${url.slice(0, url.length - file.length)}${inWorkingFolder(file)}`;
}
