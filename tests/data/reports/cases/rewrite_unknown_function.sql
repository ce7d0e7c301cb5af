-- dialect: postgres
SELECT avrage(quantity_produced) FROM production_runs
