-- dialect: duckdb
SELECT * FROM '/etc/passwd'
