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

// Player names repeat from game to game of a file, and an import writes two slugs per game: the last few
// thousand names' slugs are kept, rather than running the regular expressions for each.
const PLAYER_SLUGS_KEPT = 4096;
const playerSlugs = new Map<string, string>();

function playerSlug(name: string): string {
  let slug = playerSlugs.get(name);
  if (slug === undefined) {
    if (playerSlugs.size >= PLAYER_SLUGS_KEPT) playerSlugs.clear();
    slug = slugify(name);
    playerSlugs.set(name, slug);
  }
  return slug;
}

/**
 * A game's slug: players and year (if known), made unique by the last 12 hex digits of its id, not its first
 * 12, the import millisecond that many games share. The last 12 start at random in each millisecond and count
 * up within it (gameId), so the ids of one import differ there.
 */
export function gameSlug(
  white: string | null,
  black: string | null,
  year: string | null,
  id: string,
): string {
  const players = `${playerSlug(white ?? 'unknown')}-vs-${playerSlug(black ?? 'unknown')}`;
  return year ? `${players}-${year}-${id.slice(-12)}` : `${players}-${id.slice(-12)}`;
}
