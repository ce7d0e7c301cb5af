-- dialect: mysql
SELECT id FROM machine
