-- dialect: mysql
SELECT @@version
