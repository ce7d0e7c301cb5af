-- dialect: postgres
WITH d AS (DELETE FROM machines RETURNING *) SELECT * FROM d
