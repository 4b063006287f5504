/** The stamp a saved copy carries: `.atskills/<disk path>/.source` (SPEC 1.5). */
export const SOURCE_FILE = '.source';
