/**
 * The value of one series of a Prometheus exposition (a /metrics body): the metric's name with its labels as
 * exposed (`atskills_db_pool_connections{state="busy"}`, or a bare name); undefined when it is not there.
 */
export function seriesValue(exposition: string, series: string): number | undefined {
  const line = exposition.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}
