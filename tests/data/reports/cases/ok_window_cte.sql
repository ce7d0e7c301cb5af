-- dialect: postgres
WITH per_machine AS (
  SELECT machine_id, SUM(downtime_minutes) AS downtime FROM maintenance_logs GROUP BY machine_id
)
SELECT m.name, p.downtime, RANK() OVER (ORDER BY p.downtime DESC) AS rnk
FROM per_machine AS p JOIN machines AS m ON m.id = p.machine_id
