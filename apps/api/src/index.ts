export { type AppDeps, buildApp } from './app.js';
export { type AppConfig, ConfigError, loadConfig } from './config.js';
export { HttpProblem, isHttpProblem, PROBLEMS, type ProblemCode, problem } from './problems.js';
export type { SearchEngine, SearchFilters, SearchHit, SearchPage } from './search/engine.js';
export { ANONYMOUS_VIEWER, type Viewer } from './services/auth/viewer.js';
