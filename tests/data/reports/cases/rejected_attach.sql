-- dialect: duckdb
ATTACH 'other.db'
