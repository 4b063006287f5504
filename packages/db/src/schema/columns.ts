import { customType } from 'drizzle-orm/pg-core';

/** Postgres `tsvector`, for the full-text search column. */
export const tsvector = customType<{ data: string }>({
  dataType: () => 'tsvector',
});

/** Postgres `bytea` as a Node Buffer (file contents). */
export const bytea = customType<{ data: Buffer; driverData: Buffer }>({
  dataType: () => 'bytea',
});
