-- dialect: sqlite
-- role: analyst
SELECT * FROM machines
