-- dialect: sqlite
SELECT nme, opened_on FROM factories WHERE capacity_idx > 10
