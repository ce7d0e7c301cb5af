"""The peer's side of `cargo xtask bench guard_spider`: sqlglot's `parse_one` + `qualify`
over Spider dev's 1,034 gold queries with their schemas, the statements the guard's
`guard_spider/check` bench checks. Prints one JSON object:
{"statements": n, "qualified": k, "seconds": s, "per_second": r, "sqlglot": version}.

The time covers parsing and qualifying every statement, the ones sqlglot fails on too.
Each database's schema is read from its DDL with sqlglot once, before timing.
Usage: python sqlglot_guard.py DATA_DIR [PASSES]
"""

import json
import pathlib
import sys
import time

import sqlglot
from sqlglot import exp
from sqlglot.optimizer.qualify import qualify


def schema_of(ddl: str) -> dict:
    tables = {}
    for statement in sqlglot.parse(ddl, read="sqlite"):
        if not isinstance(statement, exp.Create) or statement.kind != "TABLE":
            continue
        table = statement.this.this.name
        columns = {}
        for column in statement.this.expressions:
            if isinstance(column, exp.ColumnDef):
                kind = column.args.get("kind")
                columns[column.name] = kind.sql("sqlite") if kind else "TEXT"
        tables[table] = columns
    return tables


def main() -> None:
    data = pathlib.Path(sys.argv[1])
    passes = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    queries = []
    for line in (data / "dev_gold.sql").read_text().splitlines():
        if line.strip():
            sql, db = line.rsplit("\t", 1)
            queries.append((sql, db.strip()))
    schemas = {
        db: schema_of((data / "schemas" / f"{db}.sql").read_text())
        for db in sorted({db for _, db in queries})
    }
    best = None
    qualified = 0
    for _ in range(passes):
        ok = 0
        started = time.perf_counter()
        for sql, db in queries:
            try:
                qualify(sqlglot.parse_one(sql, read="sqlite"), schema=schemas[db], dialect="sqlite")
                ok += 1
            except Exception:  # noqa: BLE001 - a failure is timed like a success
                pass
        elapsed = time.perf_counter() - started
        if best is None or elapsed < best:
            best = elapsed
        qualified = ok
    print(json.dumps({
        "statements": len(queries),
        "qualified": qualified,
        "seconds": best,
        "per_second": len(queries) / best,
        "sqlglot": sqlglot.__version__,
    }))


if __name__ == "__main__":
    main()
