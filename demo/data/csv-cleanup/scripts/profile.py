"""Print a per-column summary of a CSV file: non-empty count, distinct values, a sample."""
import csv
import sys

with open(sys.argv[1], newline="", encoding=sys.argv[2] if len(sys.argv) > 2 else "utf-8") as f:
    rows = list(csv.DictReader(f))

for column in rows[0].keys() if rows else []:
    values = [r[column] for r in rows if r[column]]
    print(f"{column}: {len(values)} non-empty, {len(set(values))} distinct, e.g. {values[:3]}")
