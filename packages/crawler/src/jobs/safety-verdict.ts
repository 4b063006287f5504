// The one scanner version lives with the rules in the protocol; the crawl jobs import it from here.
export { SCANNER_VERSION } from '@atskills/protocol';
