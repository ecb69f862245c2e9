// Which outside text a lookup can find at all, the same on both dialects.

/**
 * False for text that no id or slug can equal because it holds U+0000: PostgreSQL refuses it even as a
 * query parameter (SQLSTATE 22021), where SQLite just finds nothing. Lookups of outside input (a path
 * segment such as `%00`) check it first, so both dialects answer "not found".
 */
export function storable(text: string): boolean {
  return !text.includes('\0');
}
