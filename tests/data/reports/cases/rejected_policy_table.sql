-- dialect: sqlite
-- role: analyst
SELECT warehouse FROM inventory
