import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { registerList } from './list.js';
import { registerLogout } from './logout.js';
import { registerOutdated } from './outdated.js';
import { registerRemove } from './remove.js';
import { registerUpdate } from './update.js';
import { registerWhoami } from './whoami.js';

/** The project lifecycle and account commands: list, outdated, update, remove, whoami, logout. */
export function registerLifecycle(program: Command, ctx: CliContext): void {
  registerList(program, ctx);
  registerOutdated(program, ctx);
  registerUpdate(program, ctx);
  registerRemove(program, ctx);
  registerWhoami(program, ctx);
  registerLogout(program, ctx);
}
