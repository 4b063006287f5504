/**
 * `npm run github-standin -- --corpus <dir> [--port N] [--git-port N]`: serves a local GitHub (git over
 * smart HTTP and the REST endpoints the crawler calls) for the repositories of a corpus folder laid out
 * like ../shared/corpus/repos (rebuilt into bare repositories, cached), or of a folder that already holds
 * `<owner>/<repo>.git`. Prints GITHUB_API_URL=... and GIT_BASE_URL=... then serves until stopped.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { buildCorpusRepos, corpusReposDir, listCorpusRepos } from './corpus.js';
import { listBareRepos, startGithubStandin } from './github-standin.js';

const { values } = parseArgs({
  options: {
    corpus: { type: 'string', default: corpusReposDir },
    port: { type: 'string', default: '0' },
    'git-port': { type: 'string', default: '0' },
  },
});

const dir = path.resolve(values.corpus!);
if (!existsSync(dir)) {
  process.stderr.write(`github-standin: no such folder: ${dir}\n`);
  process.exit(2);
}
let reposRoot = dir;
let corpusDir: string | undefined;
if ((await listCorpusRepos(dir).catch(() => [])).length > 0) {
  process.stderr.write(
    'github-standin: rebuilding git repositories from the corpus (cached after the first time)...\n',
  );
  reposRoot = await buildCorpusRepos(dir);
  corpusDir = dir;
} else if ((await listBareRepos(dir)).length === 0) {
  process.stderr.write(
    `github-standin: ${dir} holds neither a corpus (<owner>/<repo>/tree.tsv) nor <owner>/<repo>.git\n`,
  );
  process.exit(2);
}

const standin = await startGithubStandin({
  reposRoot,
  corpusDir,
  port: Number(values.port),
  gitPort: Number(values['git-port']),
});
process.stdout.write(`GITHUB_API_URL=${standin.apiUrl}\nGIT_BASE_URL=${standin.gitUrl}\n`);
process.stderr.write(
  `github-standin: serving ${(await listBareRepos(reposRoot)).length} repositories; Ctrl-C stops\n`,
);

const stop = async () => {
  await standin.close();
  process.exit(0);
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
