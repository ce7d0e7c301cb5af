-- dialect: duckdb
SELECT updated_at, 'DROP TABLE inventory' AS note -- DELETE everything
FROM inventory WHERE warehouse LIKE '%insert%'
