-- dialect: postgres
SELECT pg_read_file('/etc/passwd') AS x FROM machines
