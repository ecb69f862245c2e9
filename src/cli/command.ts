// How `chessport` reads its arguments (docs/cli.md "Ids that begin with '-'"): as commander does, except that an
// id, token or name the command takes is taken as it is printed, also one that begins with '-' (an OAuth
// grant id or access token stored before, or made by the OAuth library, may: base64url has '-'). Commander
// alone reads every such argument as an option: `tokens revoke -UvAtN…` would be an unknown option, and
// `tokens revoke -VAbc…` would print the version (`-V` with the flags `-A`, `-b`, `-c`…) and revoke nothing.
import { Command, type Option, type ParseOptionsResult } from 'commander';

/** What commander takes for an option, or for the first of a group of short flags. */
const looksLikeOption = (arg: string) => arg.length > 1 && arg.startsWith('-');

/**
 * How many arguments from `args[at]` on are one of `options` with its value, in its exact spelling
 * (`--limit 5`, `--limit=5`, `--json`, `-V`); 0 when `args[at]` is none of them.
 */
function optionSpan(options: readonly Option[], args: readonly string[], at: number): number {
  const arg = args[at] as string;
  const option = options.find((o) => o.short === arg || o.long === arg);
  if (option) {
    const next = args[at + 1];
    if (option.required) return next === undefined ? 1 : 2;
    if (option.optional) return next === undefined || looksLikeOption(next) ? 1 : 2;
    return 1;
  }
  const equals = arg.indexOf('=');
  if (arg.startsWith('--') && equals > 2) {
    const named = options.find((o) => o.long === arg.slice(0, equals));
    if (named && (named.required || named.optional)) return 1;
  }
  return 0;
}

/**
 * The `chessport` command and each of its subcommands (createCommand): commander's Command, with two changes
 * to how options are told from operands.
 *
 * - A command with subcommands (`chessport`, `tokens`...) takes its options before its subcommand's name as
 *   commander does, and after it only as they are spelt (`--database-url URL`, `-V`): everything else there
 *   is the subcommand's, never a group of this command's short flags.
 * - A command with operands, none of them variadic (`tokens revoke <token-or-id>`, `games update <id> <file>`),
 *   takes an argument that begins with '-' and is none of its options as an operand while it has operands to
 *   fill that its other arguments leave unfilled, in order; beyond that, it is an unknown option, as commander
 *   says. `--` still ends the options. `import <files...>` keeps commander's rule: it has no number of
 *   operands to fill, and a mistyped option must not read as a file; so do the commands whose operands are
 *   new names (newNames).
 */
export class ChessportCommand extends Command {
  /** Whether an argument that begins with '-' may be an operand (see newNames). */
  private dashedOperands = true;

  override createCommand(name?: string): ChessportCommand {
    return new ChessportCommand(name);
  }

  /**
   * This command's operands are new names (`users add <login>`), none it printed: one that begins with '-'
   * comes after `--`, so that a mistyped option (`apps add --devce`) is refused rather than registered.
   */
  newNames(): this {
    this.dashedOperands = false;
    return this;
  }

  override parseOptions(args: string[]): ParseOptionsResult {
    if (this.commands.length > 0) return this.parseUpToSubcommand(args);
    const operands = this.registeredArguments;
    if (this.dashedOperands && operands.length > 0 && !operands.some((a) => a.variadic))
      return super.parseOptions(this.operandsLast(args));
    return super.parseOptions(args);
  }

  /** The subcommand's arguments go to it whole, bar this command's options as they are spelt. */
  private parseUpToSubcommand(args: string[]): ParseOptionsResult {
    const at = this.subcommandAt(args);
    if (at === undefined) return super.parseOptions(args);
    const own: string[] = [];
    const rest: string[] = [];
    for (let i = at + 1; i < args.length; i++) {
      if (args[i] === '--') {
        rest.push(...args.slice(i));
        break;
      }
      const span = optionSpan(this.options, args, i);
      if (span > 0) {
        own.push(...args.slice(i, i + span));
        i += span - 1;
      } else rest.push(args[i] as string);
    }
    // The name before its own options: one missing its value at the end takes no name for it.
    const parsed = super.parseOptions([...args.slice(0, at + 1), ...own]);
    return { operands: parsed.operands, unknown: [...parsed.unknown, ...rest] };
  }

  /**
   * Where the subcommand's name is in `args`, after this command's options (and their values) only; undefined
   * when something else comes first (an unknown option, `--`, no subcommand's name, `help`): commander's own
   * parsing then says what is wrong.
   */
  private subcommandAt(args: readonly string[]): number | undefined {
    for (let i = 0; i < args.length; i++) {
      const span = optionSpan(this.options, args, i);
      if (span > 0) {
        i += span - 1;
        continue;
      }
      const arg = args[i] as string;
      const named =
        !arg.startsWith('-') && this.commands.some((c) => c.name() === arg || c.aliases().includes(arg));
      return named ? i : undefined;
    }
    return undefined;
  }

  /**
   * `args` with the operands after a `--`: the arguments that are not options, and, while operands remain to
   * be filled, those that begin with '-' and are none of this command's options (help's `-h` and `--help` are
   * among those). The rest keep their order before the `--`, for commander to read.
   */
  private operandsLast(args: string[]): string[] {
    const known = [...this.options, ...this.createHelp().visibleOptions(this)];
    // An option that wants a value and is the last argument: commander says that its value is missing.
    const last = args.at(-1);
    if (last !== undefined && known.some((o) => o.required && (o.short === last || o.long === last)))
      return args;
    const read: { arg: string; kind: 'option' | 'operand' | 'dashed' }[] = [];
    let literal: string[] = [];
    for (let i = 0; i < args.length; i++) {
      const arg = args[i] as string;
      if (arg === '--') {
        literal = args.slice(i + 1);
        break;
      }
      const span = optionSpan(known, args, i);
      if (span > 0) {
        for (const part of args.slice(i, i + span)) read.push({ arg: part, kind: 'option' });
        i += span - 1;
      } else read.push({ arg, kind: looksLikeOption(arg) ? 'dashed' : 'operand' });
    }
    let unfilled =
      this.registeredArguments.length - literal.length - read.filter((r) => r.kind === 'operand').length;
    for (const r of read) {
      if (r.kind === 'dashed' && unfilled > 0) {
        r.kind = 'operand';
        unfilled--;
      }
    }
    const operands = [...read.filter((r) => r.kind === 'operand').map((r) => r.arg), ...literal];
    const others = read.filter((r) => r.kind !== 'operand').map((r) => r.arg);
    return operands.length === 0 ? others : [...others, '--', ...operands];
  }
}
