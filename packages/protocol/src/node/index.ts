// Node-only half of @atskills/protocol: file system, git and network. The pure core is '@atskills/protocol'.
export * from './cache.js';
export * from './fs-tree.js';
export * from './git.js';
export * from './git-source.js';
export * from './http-request.js';
export * from './hub-source.js';
export * from './hub-url.js';
export * from './install.js';
export * from './local-check.js';
export * from './local-source.js';
export * from './over-cap.js';
export * from './project.js';
export * from './resolve-error.js';
export * from './resolver.js';
export * from './save.js';
export * from './settings.js';
export * from './source-file.js';
