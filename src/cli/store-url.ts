// The store's URL as the CLI prints it: a PostgreSQL URL may carry a password, which never goes to a
// terminal, a log or a script's JSON.

/** The URL with its password (if any) replaced by `***`; a SQLite path as it is. */
export function maskUrl(url: string): string {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) return url;
  try {
    const parsed = new URL(url);
    if (parsed.password === '') return url;
    parsed.password = '***';
    return parsed.toString();
  } catch {
    // Not a URL that parses: hide anything between the scheme's "//" and an "@".
    return url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@]*:)[^@]*@/i, '$1***@');
  }
}
