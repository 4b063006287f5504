// The lookbehind anchors each run of slashes at its first one: `/\/+$/` retried the run from every slash of
// it and took quadratic time on a string of slashes (a 262,144-slash repository name held the loop 49 s).

/** `text` without the slashes it ends with (`https://hub.example.org/` -> `https://hub.example.org`). */
export function trimTrailingSlashes(text: string): string {
  return text.replace(/(?<!\/)\/+$/, '');
}

/** `text` without the slashes it starts or ends with (a folder path as typed: `/skills/pdf/` -> `skills/pdf`). */
export function trimEdgeSlashes(text: string): string {
  return text.replace(/^\/+|(?<!\/)\/+$/g, '');
}
