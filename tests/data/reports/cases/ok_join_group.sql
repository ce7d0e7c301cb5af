-- dialect: sqlite
SELECT f.name AS factory, SUM(r.quantity_produced) AS total_quantity
FROM production_runs AS r
JOIN machines AS m ON r.machine_id = m.id
JOIN factories AS f ON m.factory_id = f.id
WHERE r.started_at >= '2024-04-01'
GROUP BY f.name
ORDER BY total_quantity DESC
LIMIT 10
