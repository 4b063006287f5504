// What every resolving command needs from the protocol's node half, through its start-up entry: importing
// the `./node` barrel here would make the bundle load every module it re-exports (save, install, yaml, ...)
// on each `atskills get`. context.ts imports this file when a command first resolves.
export {
  DEFAULT_SUGGEST_LIMIT,
  findProjectDir,
  loadSettings,
  Resolver,
} from '@atskills/protocol/node/resolving';
