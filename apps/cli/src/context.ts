import type { ClientSettings, Resolver } from '@atskills/protocol/node';

/** Where the CLI writes (process streams in main.ts, buffers in tests). */
export interface Output {
  write(text: string): unknown;
}

/** How `runCli` is called: everything the CLI reads from its surroundings. */
export interface CliIo {
  cwd: string;
  env: NodeJS.ProcessEnv;
  stdout: Output;
  stderr: Output;
  /** Read by `login` when no --token is given. */
  stdin?: AsyncIterable<Buffer | string>;
  /** The hub used when neither ATSKILLS_HUB nor the stored config names one (the hub a copy came from). */
  defaultHub?: string;
}

/**
 * One run of the CLI: its surroundings plus lazily built settings and resolver. The node half of the
 * protocol (resolver, cache, git, tar) is imported on first use, so commands that never resolve (`refs`,
 * `--help`) do not load it.
 */
export class CliContext {
  exitCode = 0;
  private settingsValue?: Readonly<ClientSettings>;
  private resolverValue?: Resolver;

  constructor(readonly io: CliIo) {}

  /** Writes a line to stdout. */
  out(text: string): void {
    this.io.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  }

  /** Writes a line to stderr. */
  err(text: string): void {
    this.io.stderr.write(text.endsWith('\n') ? text : `${text}\n`);
  }

  /** Prints a JSON value on stdout. */
  json(value: unknown): void {
    this.out(JSON.stringify(value, null, 2));
  }

  /** Settings from the environment and the stored `login` config, parsed once per run. */
  async settings(): Promise<Readonly<ClientSettings>> {
    if (!this.settingsValue) {
      const [{ loadSettings }, { readStoredConfig }] = await Promise.all([
        import('./node-half.js'),
        import('./config-file.js'),
      ]);
      const stored = await readStoredConfig(this.io.env);
      const fallback = this.io.defaultHub ? { hub: this.io.defaultHub } : {};
      this.settingsValue = loadSettings(this.io.env, { ...fallback, ...stored });
      // Said, not fatal: a hook must still answer its host, and every such variable has a default.
      for (const what of this.settingsValue.ignored)
        this.err(`atskills: ignored ${what}; its default applies`);
    }
    return this.settingsValue;
  }

  /** The resolver of this run, built once from the settings. */
  async resolver(): Promise<Resolver> {
    if (!this.resolverValue) {
      const { Resolver } = await import('./node-half.js');
      this.resolverValue = new Resolver(await this.settings());
    }
    return this.resolverValue;
  }

  /** The project root: the nearest folder holding `.atskills/`, else the working folder. */
  async projectDir(): Promise<string> {
    const { findProjectDir } = await import('./node-half.js');
    return findProjectDir(this.io.cwd);
  }

  /** All of stdin as text ('' when there is none or it is a terminal nobody typed into). */
  async readStdin(): Promise<string> {
    const stdin = this.io.stdin;
    if (!stdin || (stdin as { isTTY?: boolean }).isTTY) return '';
    // One decoder for the whole stream: a character split between two chunks (64 KiB each from a pipe) is
    // decoded whole, not as two replacement characters.
    const decoder = new TextDecoder();
    let text = '';
    for await (const chunk of stdin)
      text += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    return text + decoder.decode();
  }

  /** Whether a person sits at both ends (stdin and stdout are terminals), so a question can be asked. */
  interactive(): boolean {
    return (
      (this.io.stdin as { isTTY?: boolean } | undefined)?.isTTY === true &&
      (this.io.stdout as { isTTY?: boolean }).isTTY === true
    );
  }

  /** Asks a yes/no question on stderr and reads one line of stdin; only `y`/`yes` is yes. */
  async confirm(question: string): Promise<boolean> {
    if (!this.interactive() || !this.io.stdin) return false;
    this.io.stderr.write(`${question} [y/N] `);
    for await (const chunk of this.io.stdin) {
      const answer = (typeof chunk === 'string' ? chunk : chunk.toString('utf8')).trim().toLowerCase();
      return answer === 'y' || answer === 'yes';
    }
    return false;
  }

  /** Raises the run's exit code (the most specific failure of a batch wins over "ok"). */
  fail(code: number): void {
    if (this.exitCode === 0) this.exitCode = code;
  }
}
