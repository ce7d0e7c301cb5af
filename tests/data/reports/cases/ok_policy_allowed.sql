-- dialect: sqlite
-- role: analyst
SELECT m.name, f.name AS factory FROM machines AS m JOIN factories AS f ON f.id = m.factory_id
