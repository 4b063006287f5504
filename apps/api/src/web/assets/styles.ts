// The site's stylesheet, kept as a string so it ships with the TypeScript build (no asset pipeline) and is
// served from /assets/ (the Content-Security-Policy allows no inline styles).

/** Source of /assets/site.css. */
export const SITE_STYLES = `:root {
  color-scheme: light dark;
  --fg: #1d232a; --muted: #5b6673; --bg: #ffffff; --panel: #f5f7f9; --line: #d9dee3;
  --accent: #0b62c4; --warn-bg: #fff4d6; --warn-fg: #6b4a00; --high-bg: #ffe1e0; --high-fg: #8a1010;
  --info-bg: #e6f0fb; --info-fg: #134a80;
}
@media (prefers-color-scheme: dark) {
  :root {
    --fg: #e6e9ec; --muted: #9aa5b1; --bg: #14181c; --panel: #1c2227; --line: #2e363e;
    --accent: #6cb0ff; --warn-bg: #3d3112; --warn-fg: #ffd98a; --high-bg: #4a1a1a; --high-fg: #ffb4b0;
    --info-bg: #15304d; --info-fg: #a9d0ff;
  }
}
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); }
a { color: var(--accent); }
code, pre, kbd { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.9em; }
code { overflow-wrap: anywhere; }
header.site, main, footer.site { max-width: 960px; margin: 0 auto; padding: 0 1rem; }
header.site { display: flex; flex-wrap: wrap; align-items: baseline; gap: 0.25rem 1rem; padding-top: 1rem; padding-bottom: 0.5rem; border-bottom: 1px solid var(--line); }
header.site .brand { font-weight: 700; font-size: 1.2rem; text-decoration: none; color: var(--fg); }
header.site nav { margin-left: auto; display: flex; flex-wrap: wrap; gap: 0.25rem 1rem; font-size: 0.9rem; }
footer.site { margin-top: 3rem; padding-top: 1rem; padding-bottom: 2rem; border-top: 1px solid var(--line); color: var(--muted); font-size: 0.85rem; }
form.search { margin: 1.5rem 0 1rem; }
form.search .search-row { display: flex; flex-wrap: wrap; gap: 0.5rem; }
form.search input[type=search] { flex: 1 1 16rem; min-width: 0; padding: 0.55rem 0.7rem; font-size: 1rem; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); color: var(--fg); }
form.search details.filters { margin-top: 0.5rem; font-size: 0.9rem; }
form.search details.filters summary { cursor: pointer; color: var(--muted); }
form.search .filter-fields { display: grid; grid-template-columns: repeat(auto-fit, minmax(12rem, 1fr)); gap: 0.5rem; margin-top: 0.5rem; }
form.search .field label { display: block; color: var(--muted); font-size: 0.85rem; }
form.search .field input { width: 100%; padding: 0.4rem 0.6rem; font-size: 1rem; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); color: var(--fg); }
form.search select, form.search button { padding: 0.5rem 0.8rem; font-size: 1rem; border: 1px solid var(--line); border-radius: 6px; background: var(--panel); color: var(--fg); }
.notice { padding: 0.75rem 1rem; border-radius: 6px; background: var(--warn-bg); color: var(--warn-fg); }
ol.results { list-style: none; padding: 0; margin: 0; }
ol.results > li { padding: 1rem 0; border-bottom: 1px solid var(--line); overflow-wrap: anywhere; }
.suggest-form label { display: block; margin-bottom: 0.4rem; }
.suggest-form textarea { display: block; box-sizing: border-box; width: 100%; min-height: 8rem; padding: 0.55rem 0.7rem; font: inherit; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); color: var(--fg); resize: vertical; }
.suggest-form button { margin-top: 0.5rem; padding: 0.5rem 0.8rem; font-size: 1rem; border: 1px solid var(--line); border-radius: 6px; background: var(--panel); color: var(--fg); }
.suggest-unlikely { margin-top: 1.5rem; color: var(--muted); }
.suggest-unlikely > h2 { font-size: 1rem; }
.suggest-unlikely h3 { font-size: 1.1rem; margin: 0; }
.result-head { display: flex; flex-wrap: wrap; align-items: baseline; gap: 0.5rem; }
.result-head h2 { font-size: 1.1rem; margin: 0; }
.result-desc { margin: 0.3rem 0; }
.meta { display: flex; flex-wrap: wrap; gap: 0.25rem 1rem; color: var(--muted); font-size: 0.85rem; margin: 0.3rem 0; }
.kind { font-size: 0.75rem; padding: 0 0.4rem; border: 1px solid var(--line); border-radius: 999px; color: var(--muted); }
.reference { display: flex; flex-wrap: wrap; align-items: center; gap: 0.5rem; margin: 0.4rem 0; }
.reference code { padding: 0.2rem 0.45rem; background: var(--panel); border: 1px solid var(--line); border-radius: 4px; user-select: all; overflow-wrap: anywhere; }
button.copy { font-size: 0.8rem; padding: 0.15rem 0.6rem; border: 1px solid var(--line); border-radius: 4px; background: var(--bg); color: var(--fg); cursor: pointer; }
.flags { display: inline-flex; flex-wrap: wrap; gap: 0.3rem; }
.flag { font-size: 0.75rem; padding: 0.05rem 0.45rem; border-radius: 4px; cursor: help; background: var(--warn-bg); color: var(--warn-fg); }
.flag.severity-high, .flag.severity-danger { background: var(--high-bg); color: var(--high-fg); }
.flag.severity-info { background: var(--info-bg); color: var(--info-fg); }
.warning-list { color: var(--muted); font-size: 0.85rem; }
nav.pager { display: flex; gap: 1rem; margin: 1.5rem 0; }
section.status { margin-top: 2rem; padding: 0.75rem 1rem; background: var(--panel); border-radius: 6px; font-size: 0.9rem; }
section.status h2 { font-size: 1rem; margin: 0 0 0.3rem; }
section.status dl, dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 0.2rem 1rem; margin: 0; }
dl.facts dt, section.status dt { color: var(--muted); }
dl.facts dd, section.status dd { margin: 0; overflow-wrap: anywhere; }
.skill-title { margin: 1.5rem 0 0.3rem; }
.lead { font-size: 1.05rem; margin-top: 0; }
.panel { background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: 0.75rem 1rem; margin: 1rem 0; }
.panel h2 { font-size: 1rem; margin: 0 0 0.5rem; }
table.data { border-collapse: collapse; width: 100%; font-size: 0.9rem; }
table.data th, table.data td { text-align: left; padding: 0.3rem 0.5rem; border-bottom: 1px solid var(--line); vertical-align: top; overflow-wrap: break-word; }
table.data th { white-space: nowrap; }
/* A cell's words and codes are not split to fit a narrow column: "break-word" only breaks what would overflow. */
table.data code { overflow-wrap: break-word; }
table.data td[data-label="Rule"] code { white-space: nowrap; }
table.data td.num { text-align: right; white-space: nowrap; }
.markdown { border-top: 1px solid var(--line); margin-top: 1.5rem; padding-top: 0.5rem; overflow-wrap: anywhere; }
.markdown pre { background: var(--panel); padding: 0.75rem; border-radius: 6px; overflow-x: auto; }
.markdown img { max-width: 100%; }
.markdown a:not([href]) { color: inherit; text-decoration: underline dotted; cursor: not-allowed; }
.markdown table { border-collapse: collapse; }
.markdown th, .markdown td { border: 1px solid var(--line); padding: 0.25rem 0.5rem; }
.markdown blockquote { margin-left: 0; padding-left: 1rem; border-left: 3px solid var(--line); color: var(--muted); }
pre.frontmatter { background: var(--panel); padding: 0.75rem; border-radius: 6px; overflow-x: auto; white-space: pre-wrap; }
.panel pre { white-space: pre-wrap; overflow-wrap: anywhere; }
ul.menu { padding-left: 1.2rem; overflow-wrap: anywhere; }
h2.list-title { font-size: 1.1rem; margin: 1.5rem 0 0.5rem; }
p.feed-note { color: var(--muted); font-size: 0.9rem; }
.home-title { font-size: 1.4rem; margin: 1.5rem 0 0; }
.browse { display: grid; grid-template-columns: repeat(auto-fit, minmax(17rem, 1fr)); gap: 0 1.5rem; margin-top: 1rem; }
.browse-list h2 { font-size: 1.05rem; margin: 1.2rem 0 0.4rem; }
ol.links, ol.history { list-style: none; padding: 0; margin: 0; }
ol.links > li, ol.history > li { padding: 0.35rem 0; border-bottom: 1px solid var(--line); overflow-wrap: anywhere; }
ol.links .meta, ol.history .meta { display: block; margin: 0; }
ol.links .desc { display: block; font-size: 0.9rem; }
ol.history li[aria-current] a { font-weight: 700; }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
main:focus { outline: none; }
.skip-link { position: absolute; left: -999rem; top: 0.5rem; padding: 0.4rem 0.8rem; background: var(--bg); color: var(--accent); border: 2px solid var(--accent); border-radius: 6px; z-index: 1; }
.skip-link:focus { left: 1rem; }
@media (max-width: 40rem) {
  /* Each cell names its column (data-label, read by screen readers too), so the header row can go. */
  table.stack thead { display: none; }
  table.stack, table.stack tbody, table.stack tr, table.stack td { display: block; width: 100%; }
  table.stack tr { padding: 0.4rem 0; border-bottom: 1px solid var(--line); }
  table.stack td { border: 0; padding: 0.1rem 0; }
  table.stack td::before { content: attr(data-label) ": "; color: var(--muted); font-weight: 600; }
  table.stack td:empty { display: none; }
  dl.facts { grid-template-columns: 1fr; }
  dl.facts dd { margin-bottom: 0.3rem; }
}
ul.menu li { margin: 0.4rem 0; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
.error-code { color: var(--muted); font-size: 0.9rem; }
`;
