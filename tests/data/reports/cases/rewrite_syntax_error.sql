-- dialect: generic
SELECT id, FROM machines WHERE
