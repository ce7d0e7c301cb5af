-- dialect: sqlite
SELECT 1; DROP TABLE machines
