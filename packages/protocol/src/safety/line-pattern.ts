/**
 * One way a rule matches a line: the pattern, what it means, and `needs`: what every match holds after
 * the pattern's bounded window (a pipe into a shell, a secret path, ...), tested on the line first. Each
 * command word of a line starts a window of up to 300 characters; a line of them alone (a MiB of `curl `)
 * held the scan for a second, and with these checks takes what a plain line does unless it holds the rest.
 */
export interface LinePattern {
  regex: RegExp;
  what: string;
  needs?: readonly RegExp[];
}

/** Whether `line` holds everything a match of `pattern` needs, so that its regex is worth running. */
export function mayMatch(pattern: LinePattern, line: string): boolean {
  return pattern.needs === undefined || pattern.needs.every((needed) => needed.test(line));
}
