-- dialect: postgres
SELECT name FROM machines JOIN factories ON machines.factory_id = factories.id
