export * from './blobs.js';
export * from './crawls.js';
export * from './links.js';
export * from './repositories.js';
export * from './security.js';
export * from './skills.js';
export * from './teams.js';
export * from './uses.js';
