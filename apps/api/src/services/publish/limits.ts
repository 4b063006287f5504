/** The bounds a published collection must stay within; every one is a setting with a default. */
export interface PublishLimits {
  /** Largest request body (the gzip file itself). */
  maxCompressedBytes: number;
  /** Largest sum of file sizes once unpacked. */
  maxUnpackedBytes: number;
  /** Most regular files in one archive. */
  maxFiles: number;
  /** Most skills in one collection. */
  maxSkills: number;
  /** Largest single file. */
  maxFileBytes: number;
  /** Largest SKILL.md. */
  maxSkillMarkdownBytes: number;
  /** Longest path (characters) and path segment (UTF-8 bytes, the usual file system limit). */
  maxPathLength: number;
  maxSegmentBytes: number;
  /** Highest decompressed/compressed ratio, checked once `ratioCheckAfterBytes` have been unpacked. */
  maxCompressionRatio: number;
  ratioCheckAfterBytes: number;
}

const MiB = 1024 * 1024;

/** Defaults from the issue: 1,000 skills and 50 MiB unpacked per collection. */
export const DEFAULT_PUBLISH_LIMITS: Readonly<PublishLimits> = Object.freeze({
  maxCompressedBytes: 50 * MiB,
  maxUnpackedBytes: 50 * MiB,
  maxFiles: 10_000,
  maxSkills: 1_000,
  maxFileBytes: 10 * MiB,
  maxSkillMarkdownBytes: 1 * MiB,
  maxPathLength: 512,
  maxSegmentBytes: 255,
  // Text compresses 3-10x; 200x is only reached by padding or repeated junk, i.e. a bomb.
  maxCompressionRatio: 200,
  ratioCheckAfterBytes: 1 * MiB,
});

/**
 * The most bytes the decompressed tar stream may have: the file data plus a header and padding per file
 * (pax headers included), plus the end-of-archive padding of a generous record size.
 */
export function maxTarBytes(limits: PublishLimits): number {
  return limits.maxUnpackedBytes + limits.maxFiles * 3 * 512 + 1024 * 1024;
}
