-- dialect: sqlite
SELECT name FROM machines UNION SELECT sql FROM sqlite_master
