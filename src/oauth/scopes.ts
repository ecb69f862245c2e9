// The API's scopes in plain words, as the consent and account pages show them.
import type { Scope } from '../domain/scopes.ts';

export const SCOPE_WORDS: Record<Scope, string> = {
  'user.read': 'See your name, e-mail address and picture',
  'databases.read': 'See the list of your game databases',
  'games.read': 'Read all your games, with their moves, and follow every change to them',
};

/** The words for each known scope, in the API's order. */
export function scopeWords(scopes: readonly string[]): string[] {
  return (Object.keys(SCOPE_WORDS) as Scope[]).filter((s) => scopes.includes(s)).map((s) => SCOPE_WORDS[s]);
}
