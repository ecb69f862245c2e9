// URL slugs: lower-case ASCII letters, digits and single hyphens.
export function slugify(text: string): string {
  const slug = text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60)
    .replace(/-+$/, '');
  return slug || 'untitled';
}

/** A game's slug: players and year, made unique by the start of its id. */
export function gameSlug(
  white: string | null,
  black: string | null,
  date: string | null,
  id: string,
): string {
  const year = date?.slice(0, 4);
  const players = `${slugify(white ?? 'unknown')}-vs-${slugify(black ?? 'unknown')}`;
  return [players, year, id.replace(/-/g, '').slice(0, 12)].filter(Boolean).join('-');
}
