-- Typical analytics queries over schema.sql (SQLite), one statement per `;`.
-- Every statement must pass the guard: the bench checks that before timing.

-- 1. Revenue by month.
SELECT strftime('%Y-%m', o.order_date) AS month, SUM(oi.quantity * oi.unit_price * (1 - oi.discount)) AS revenue
FROM orders AS o JOIN order_items AS oi ON oi.order_id = o.order_id
WHERE o.status = 'completed'
GROUP BY strftime('%Y-%m', o.order_date)
ORDER BY month;

-- 2. Top customers by revenue.
SELECT c.customer_id, c.name, SUM(oi.quantity * oi.unit_price) AS revenue
FROM customers c
JOIN orders o ON o.customer_id = c.customer_id
JOIN order_items oi ON oi.order_id = o.order_id
GROUP BY c.customer_id, c.name
ORDER BY revenue DESC
LIMIT 10;

-- 3. Orders per channel and status.
SELECT channel, status, COUNT(*) AS orders FROM orders GROUP BY channel, status ORDER BY channel, status;

-- 4. Average order value by segment.
SELECT c.segment, AVG(t.order_total) AS avg_order_value, COUNT(*) AS orders
FROM (
    SELECT o.order_id, o.customer_id, SUM(oi.quantity * oi.unit_price) AS order_total
    FROM orders o JOIN order_items oi ON oi.order_id = o.order_id
    GROUP BY o.order_id, o.customer_id
) AS t
JOIN customers c ON c.customer_id = t.customer_id
GROUP BY c.segment;

-- 5. Gross margin by product category.
SELECT pc.name AS category,
       SUM(oi.quantity * (oi.unit_price - p.unit_cost)) AS gross_margin,
       SUM(oi.quantity * (oi.unit_price - p.unit_cost)) / SUM(oi.quantity * oi.unit_price) AS margin_rate
FROM order_items oi
JOIN products p ON p.product_id = oi.product_id
JOIN product_categories pc ON pc.category_id = p.category_id
GROUP BY pc.name
HAVING SUM(oi.quantity) > 100
ORDER BY gross_margin DESC;

-- 6. Month-over-month revenue growth (CTE + LAG).
WITH monthly AS (
    SELECT strftime('%Y-%m', o.order_date) AS month, SUM(oi.quantity * oi.unit_price) AS revenue
    FROM orders o JOIN order_items oi ON oi.order_id = o.order_id
    GROUP BY strftime('%Y-%m', o.order_date)
)
SELECT month, revenue, LAG(revenue) OVER (ORDER BY month) AS previous_revenue,
       revenue - LAG(revenue) OVER (ORDER BY month) AS change
FROM monthly
ORDER BY month;

-- 7. Rank products within their category.
SELECT p.product_id, p.name, pc.name AS category, SUM(oi.quantity) AS units,
       RANK() OVER (PARTITION BY p.category_id ORDER BY SUM(oi.quantity) DESC) AS rank_in_category
FROM products p
JOIN product_categories pc ON pc.category_id = p.category_id
JOIN order_items oi ON oi.product_id = p.product_id
GROUP BY p.product_id, p.name, pc.name, p.category_id;

-- 8. Running total of revenue per region.
SELECT c.region, o.order_date, SUM(oi.quantity * oi.unit_price) AS revenue,
       SUM(SUM(oi.quantity * oi.unit_price)) OVER (PARTITION BY c.region ORDER BY o.order_date ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS running_revenue
FROM orders o
JOIN customers c ON c.customer_id = o.customer_id
JOIN order_items oi ON oi.order_id = o.order_id
GROUP BY c.region, o.order_date;

-- 9. Customers who never ordered.
SELECT c.customer_id, c.name FROM customers c
WHERE NOT EXISTS (SELECT 1 FROM orders o WHERE o.customer_id = c.customer_id);

-- 10. Customers with an order above the average order value.
SELECT DISTINCT o.customer_id
FROM orders o JOIN order_items oi ON oi.order_id = o.order_id
GROUP BY o.order_id, o.customer_id
HAVING SUM(oi.quantity * oi.unit_price) > (
    SELECT AVG(order_total) FROM (
        SELECT SUM(quantity * unit_price) AS order_total FROM order_items GROUP BY order_id
    ) AS totals
);

-- 11. Sales rep performance against their manager's team.
SELECT r.name AS rep, m.name AS manager, COUNT(o.order_id) AS orders
FROM sales_reps r
LEFT JOIN sales_reps m ON m.rep_id = r.manager_id
LEFT JOIN orders o ON o.rep_id = r.rep_id AND o.status <> 'cancelled'
GROUP BY r.rep_id, r.name, m.name
ORDER BY orders DESC;

-- 12. Products never sold in a region.
SELECT p.sku, p.name FROM products p
WHERE p.is_active = 1
  AND p.product_id NOT IN (
    SELECT oi.product_id FROM order_items oi
    JOIN orders o ON o.order_id = oi.order_id
    JOIN customers c ON c.customer_id = o.customer_id
    WHERE c.region = 'EMEA'
  );

-- 13. Yield and scrap rate per production line.
SELECT pl.name AS line, pt.name AS plant,
       SUM(wo.produced_qty) AS produced, SUM(wo.scrap_qty) AS scrap,
       CAST(SUM(wo.scrap_qty) AS REAL) / NULLIF(SUM(wo.produced_qty + wo.scrap_qty), 0) AS scrap_rate
FROM work_orders wo
JOIN production_lines pl ON pl.line_id = wo.line_id
JOIN plants pt ON pt.plant_id = pl.plant_id
WHERE wo.status = 'closed'
GROUP BY pl.name, pt.name
ORDER BY scrap_rate DESC;

-- 14. Downtime minutes by reason over the last 90 days.
SELECT reason_code, COUNT(*) AS events, SUM(minutes) AS total_minutes, AVG(minutes) AS avg_minutes
FROM downtime_events
WHERE started_at >= date('now', '-90 days')
GROUP BY reason_code
ORDER BY total_minutes DESC
LIMIT 5;

-- 15. Plant utilisation per day (CTE).
WITH daily AS (
    SELECT pl.plant_id, date(wo.finished_at) AS day, SUM(wo.produced_qty) AS produced
    FROM work_orders wo JOIN production_lines pl ON pl.line_id = wo.line_id
    WHERE wo.finished_at IS NOT NULL
    GROUP BY pl.plant_id, date(wo.finished_at)
)
SELECT p.name, d.day, d.produced, 1.0 * d.produced / p.capacity_units_per_day AS utilisation
FROM daily d JOIN plants p ON p.plant_id = d.plant_id
ORDER BY utilisation DESC;

-- 16. Work order lead time in hours, with percentiles by line type.
SELECT pl.line_type,
       AVG((julianday(wo.finished_at) - julianday(wo.started_at)) * 24) AS avg_hours,
       MAX((julianday(wo.finished_at) - julianday(wo.started_at)) * 24) AS max_hours
FROM work_orders wo JOIN production_lines pl ON pl.line_id = wo.line_id
WHERE wo.started_at IS NOT NULL AND wo.finished_at IS NOT NULL
GROUP BY pl.line_type;

-- 17. Latest inventory snapshot per plant and product.
SELECT i.plant_id, i.product_id, i.on_hand_qty
FROM inventory i
WHERE i.snapshot_date = (
    SELECT MAX(i2.snapshot_date) FROM inventory i2
    WHERE i2.plant_id = i.plant_id AND i2.product_id = i.product_id
);

-- 18. Low stock: on hand below two weeks of average sales.
WITH latest AS (
    SELECT plant_id, product_id, on_hand_qty,
           ROW_NUMBER() OVER (PARTITION BY plant_id, product_id ORDER BY snapshot_date DESC) AS rn
    FROM inventory
),
daily_sales AS (
    SELECT oi.product_id, SUM(oi.quantity) / 90.0 AS units_per_day
    FROM order_items oi JOIN orders o ON o.order_id = oi.order_id
    WHERE o.order_date >= date('now', '-90 days')
    GROUP BY oi.product_id
)
SELECT l.plant_id, p.sku, l.on_hand_qty, ds.units_per_day
FROM latest l
JOIN products p ON p.product_id = l.product_id
JOIN daily_sales ds ON ds.product_id = l.product_id
WHERE l.rn = 1 AND l.on_hand_qty < 14 * ds.units_per_day
ORDER BY l.on_hand_qty;

-- 19. Supplier on-time rate and average cost.
SELECT s.name, s.country,
       COUNT(*) AS purchase_orders,
       AVG(CASE WHEN julianday(po.received_on) - julianday(po.ordered_on) <= 14 THEN 1.0 ELSE 0.0 END) AS on_time_rate,
       AVG(po.unit_cost) AS avg_unit_cost
FROM suppliers s JOIN purchase_orders po ON po.supplier_id = s.supplier_id
WHERE po.received_on IS NOT NULL
GROUP BY s.supplier_id, s.name, s.country
HAVING COUNT(*) >= 3
ORDER BY on_time_rate DESC, avg_unit_cost;

-- 20. Purchase cost against standard cost per product.
SELECT p.sku, p.unit_cost AS standard_cost, AVG(po.unit_cost) AS purchase_cost,
       AVG(po.unit_cost) - p.unit_cost AS variance
FROM products p JOIN purchase_orders po ON po.product_id = p.product_id
GROUP BY p.product_id, p.sku, p.unit_cost
ORDER BY ABS(AVG(po.unit_cost) - p.unit_cost) DESC
LIMIT 20;

-- 21. Shipping performance by carrier.
SELECT carrier, COUNT(*) AS shipments,
       AVG(julianday(delivered_at) - julianday(shipped_at)) AS avg_transit_days,
       SUM(freight_cost) AS freight
FROM shipments
WHERE delivered_at IS NOT NULL
GROUP BY carrier
ORDER BY avg_transit_days;

-- 22. Orders shipped late (more than 3 days after ordering).
SELECT o.order_id, c.name, o.order_date, MIN(sh.shipped_at) AS first_shipment
FROM orders o
JOIN customers c ON c.customer_id = o.customer_id
JOIN shipments sh ON sh.order_id = o.order_id
GROUP BY o.order_id, c.name, o.order_date
HAVING julianday(MIN(sh.shipped_at)) - julianday(o.order_date) > 3
ORDER BY o.order_date DESC
LIMIT 50;

-- 23. Freight cost as a share of order revenue, by plant.
SELECT pt.name AS plant, SUM(sh.freight_cost) AS freight, SUM(r.revenue) AS revenue,
       SUM(sh.freight_cost) / SUM(r.revenue) AS freight_share
FROM shipments sh
JOIN plants pt ON pt.plant_id = sh.plant_id
JOIN (SELECT order_id, SUM(quantity * unit_price) AS revenue FROM order_items GROUP BY order_id) r
  ON r.order_id = sh.order_id
GROUP BY pt.name;

-- 24. Quarterly revenue per country with a share of the quarter (window over groups).
SELECT c.country, (CAST(strftime('%m', o.order_date) AS INTEGER) + 2) / 3 AS quarter,
       SUM(oi.quantity * oi.unit_price) AS revenue,
       SUM(oi.quantity * oi.unit_price) * 1.0 / SUM(SUM(oi.quantity * oi.unit_price)) OVER (PARTITION BY (CAST(strftime('%m', o.order_date) AS INTEGER) + 2) / 3) AS share
FROM orders o
JOIN customers c ON c.customer_id = o.customer_id
JOIN order_items oi ON oi.order_id = o.order_id
WHERE strftime('%Y', o.order_date) = '2024'
GROUP BY c.country, (CAST(strftime('%m', o.order_date) AS INTEGER) + 2) / 3;

-- 25. New versus returning customers per month.
WITH first_orders AS (
    SELECT customer_id, MIN(order_date) AS first_order_date FROM orders GROUP BY customer_id
)
SELECT strftime('%Y-%m', o.order_date) AS month,
       SUM(CASE WHEN o.order_date = f.first_order_date THEN 1 ELSE 0 END) AS new_customers,
       SUM(CASE WHEN o.order_date > f.first_order_date THEN 1 ELSE 0 END) AS returning_orders
FROM orders o JOIN first_orders f ON f.customer_id = o.customer_id
GROUP BY strftime('%Y-%m', o.order_date)
ORDER BY month;

-- 26. Category tree: each category with its parent's name.
SELECT child.name AS category, COALESCE(parent.name, '(top level)') AS parent_category
FROM product_categories child
LEFT JOIN product_categories parent ON parent.category_id = child.parent_category_id
ORDER BY parent_category, category;

-- 27. Customers in the top decile by lifetime value.
SELECT customer_id, lifetime_value
FROM (
    SELECT o.customer_id, SUM(oi.quantity * oi.unit_price) AS lifetime_value,
           NTILE(10) OVER (ORDER BY SUM(oi.quantity * oi.unit_price) DESC) AS decile
    FROM orders o JOIN order_items oi ON oi.order_id = o.order_id
    GROUP BY o.customer_id
) AS ranked
WHERE decile = 1;

-- 28. Orders and shipments for one region (UNION ALL of two event streams).
SELECT 'order' AS event, o.order_id, o.order_date AS at
FROM orders o JOIN customers c ON c.customer_id = o.customer_id
WHERE c.region = 'APAC'
UNION ALL
SELECT 'shipment' AS event, sh.order_id, sh.shipped_at AS at
FROM shipments sh JOIN orders o ON o.order_id = sh.order_id JOIN customers c ON c.customer_id = o.customer_id
WHERE c.region = 'APAC'
ORDER BY at
LIMIT 100;

-- 29. Top three products per plant by units produced.
WITH produced AS (
    SELECT pl.plant_id, wo.product_id, SUM(wo.produced_qty) AS units,
           DENSE_RANK() OVER (PARTITION BY pl.plant_id ORDER BY SUM(wo.produced_qty) DESC) AS position
    FROM work_orders wo JOIN production_lines pl ON pl.line_id = wo.line_id
    GROUP BY pl.plant_id, wo.product_id
)
SELECT pt.name AS plant, p.name AS product, pr.units, pr.position
FROM produced pr
JOIN plants pt ON pt.plant_id = pr.plant_id
JOIN products p ON p.product_id = pr.product_id
WHERE pr.position <= 3
ORDER BY pt.name, pr.position;

-- 30. Discount bands and their revenue.
SELECT CASE
         WHEN discount = 0 THEN 'none'
         WHEN discount < 0.1 THEN 'under 10%'
         WHEN discount < 0.25 THEN '10-25%'
         ELSE '25% and more'
       END AS discount_band,
       COUNT(*) AS lines, SUM(quantity * unit_price * (1 - discount)) AS net_revenue
FROM order_items
GROUP BY CASE
         WHEN discount = 0 THEN 'none'
         WHEN discount < 0.1 THEN 'under 10%'
         WHEN discount < 0.25 THEN '10-25%'
         ELSE '25% and more'
       END;

-- 31. Seven-day moving average of downtime per line.
SELECT line_id, date(started_at) AS day, SUM(minutes) AS minutes,
       AVG(SUM(minutes)) OVER (PARTITION BY line_id ORDER BY date(started_at) ROWS BETWEEN 6 PRECEDING AND CURRENT ROW) AS moving_avg_minutes
FROM downtime_events
GROUP BY line_id, date(started_at);

-- 32. Reps hired this year with their first order date.
SELECT r.name, r.region, r.hired_on, MIN(o.order_date) AS first_order
FROM sales_reps r LEFT JOIN orders o ON o.rep_id = r.rep_id
WHERE r.hired_on >= '2024-01-01' AND r.region IN ('EMEA', 'NA', 'APAC')
GROUP BY r.rep_id, r.name, r.region, r.hired_on
ORDER BY first_order;
