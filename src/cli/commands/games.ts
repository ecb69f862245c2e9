// Changing single games (docs/design.md "Operator interface"): each command is one write with its own change in
// the feed. Games are named by UUID, which is unique across users, so no --user is needed.
import { createReadStream } from 'node:fs';
import type { Command } from 'commander';
import { changeJson } from '../../api/serialize.ts';
import { normalizeGame, PgnSplitter } from '../../chess/index.ts';
import type { RawGame } from '../../chess/types.ts';
import { decodePgnStream } from '../../import/decode.ts';
import { DEFAULT_MAX_GAME_SIZE, toGameRecord } from '../../import/index.ts';
import type { GameChange, GameRecord, Store } from '../../store/index.ts';
import { jsonOption, oneDatabase, withStore } from '../context.ts';
import { CliError } from '../errors.ts';
import { checkInputs } from '../inputs.ts';
import { inWorkingFolder } from '../io.ts';
import { emit } from '../output.ts';

/** Whether a game is one the import would reject unchecked: too large to hold, or cut short in a rejects file. */
const uncheckable = (raw: RawGame) =>
  raw.part === true || raw.oversize !== undefined || raw.cut !== undefined;

/**
 * The one valid game of a PGN file; a file with none, several or an invalid one changes nothing. A game (or a
 * line) larger than the import's largest game is refused as it is read, never held whole.
 */
async function readSingleGame(file: string): Promise<GameRecord> {
  const games: RawGame[] = [];
  const splitter = new PgnSplitter({ maxGameChars: DEFAULT_MAX_GAME_SIZE });
  const input = createReadStream(file);
  try {
    // Stops reading at the second game, or at a game too large: a large file is refused without being read whole.
    for await (const text of decodePgnStream(input, undefined, { maxLineBytes: DEFAULT_MAX_GAME_SIZE })) {
      games.push(...splitter.push(text));
      if (games.length > 1 || games.some(uncheckable)) break;
    }
    if (games.length < 2 && !games.some(uncheckable)) games.push(...splitter.end());
  } catch (error) {
    throw new CliError(`cannot read ${file}: ${(error as Error).message}`);
  } finally {
    input.destroy();
  }
  const unchecked = games.find(uncheckable);
  if (unchecked?.cut !== undefined)
    throw new CliError(
      `${file}: the game was cut short in a rejects file (its line ${unchecked.cut} says so)`,
    );
  if (unchecked)
    throw new CliError(
      `${file}: the game is larger than the largest game chessport checks (${DEFAULT_MAX_GAME_SIZE / (1024 * 1024)} MB)`,
    );
  const [raw] = games;
  if (!raw) throw new CliError(`${file} holds no game`);
  if (games.length > 1) throw new CliError(`${file} holds more than one game: give a file with exactly one`);
  const result = normalizeGame(raw.text);
  if (!result.ok) throw new CliError(`${file}: the game is not valid: ${result.reason}`);
  return toGameRecord(result.game);
}

/** A game's UUID as stored: the API takes one in any case (UUIDs compare case-insensitively), and so does the CLI. */
const storedId = (id: string) => id.toLowerCase();

async function requireGame(store: Store, id: string) {
  const game = await store.games.findLive(id);
  if (!game) throw new CliError(`no game "${id}"`);
  return game;
}

function describe(change: GameChange): string {
  return `${change.white.name ?? '?'} - ${change.black.name ?? '?'} ${change.result}`;
}

export function gamesCommand(program: Command): void {
  const games = program.command('games').description('change single games: update, move, delete');
  games
    .command('update <id> <file>')
    .description("replace a game's content with the single game in a PGN file (id and database stay)")
    .option(...jsonOption)
    .action(async (given: string, file: string, opts: { json?: boolean }, cmd: Command) =>
      withStore(cmd, async (store) => {
        const id = storedId(given);
        await requireGame(store, id);
        await checkInputs([file]); // as the import says it: "x.pgn: no such file", not Node's ENOENT text
        const record = await readSingleGame(inWorkingFolder(file));
        const change = await store.games.update(id, record);
        if (!change) throw new CliError(`no game "${id}"`);
        emit(Boolean(opts.json), changeJson(change), () => `updated game ${id}: ${describe(change)}`);
      }),
    );
  games
    .command('move <id>')
    .description("move a game to another of its owner's databases")
    .requiredOption('--database <id-slug-or-name>', 'target database')
    .option(...jsonOption)
    .action(async (given: string, opts: { database: string; json?: boolean }, cmd: Command) =>
      withStore(cmd, async (store) => {
        const id = storedId(given);
        const game = await requireGame(store, id);
        const found = await store.databases.findByRef(game.ownerId, opts.database);
        const target = oneDatabase(found, opts.database, "the game's owner");
        if (!target) throw new CliError(`no database "${opts.database}" of the game's owner`);
        const outcome = await store.games.move(id, target);
        if (!outcome) throw new CliError(`no game "${id}"`);
        const { change, fromDatabaseId, moved } = outcome;
        emit(Boolean(opts.json), { ...changeJson(change), fromDatabaseId, moved }, () =>
          moved ? `moved game ${id} to ${target.slug}` : `game ${id} is already in ${target.slug}`,
        );
      }),
    );
  games
    .command('delete <id>')
    .description('delete a game: it leaves lists and detail and shows in the feed as deleted')
    .option(...jsonOption)
    .action(async (given: string, opts: { json?: boolean }, cmd: Command) =>
      withStore(cmd, async (store) => {
        const id = storedId(given);
        const change = await store.games.delete(id);
        if (!change) throw new CliError(`no game "${id}"`);
        emit(Boolean(opts.json), changeJson(change), () => `deleted game ${id}: ${describe(change)}`);
      }),
    );
}
