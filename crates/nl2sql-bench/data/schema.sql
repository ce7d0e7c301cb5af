-- A small sales and manufacturing schema (SQLite), the catalog for the guard benches.
CREATE TABLE customers (
    customer_id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    segment TEXT NOT NULL,
    region TEXT NOT NULL,
    country TEXT NOT NULL,
    created_at TEXT NOT NULL
);

CREATE TABLE product_categories (
    category_id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    parent_category_id INTEGER REFERENCES product_categories (category_id)
);

CREATE TABLE products (
    product_id INTEGER PRIMARY KEY,
    sku TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    category_id INTEGER NOT NULL REFERENCES product_categories (category_id),
    unit_price REAL NOT NULL,
    unit_cost REAL NOT NULL,
    is_active INTEGER NOT NULL DEFAULT 1
);

CREATE TABLE sales_reps (
    rep_id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    region TEXT NOT NULL,
    manager_id INTEGER REFERENCES sales_reps (rep_id),
    hired_on TEXT NOT NULL
);

CREATE TABLE orders (
    order_id INTEGER PRIMARY KEY,
    customer_id INTEGER NOT NULL REFERENCES customers (customer_id),
    rep_id INTEGER REFERENCES sales_reps (rep_id),
    order_date TEXT NOT NULL,
    status TEXT NOT NULL,
    channel TEXT NOT NULL,
    currency TEXT NOT NULL
);

CREATE TABLE order_items (
    order_id INTEGER NOT NULL REFERENCES orders (order_id),
    line_no INTEGER NOT NULL,
    product_id INTEGER NOT NULL REFERENCES products (product_id),
    quantity INTEGER NOT NULL,
    unit_price REAL NOT NULL,
    discount REAL NOT NULL DEFAULT 0,
    PRIMARY KEY (order_id, line_no)
);

CREATE TABLE plants (
    plant_id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    country TEXT NOT NULL,
    capacity_units_per_day INTEGER NOT NULL
);

CREATE TABLE production_lines (
    line_id INTEGER PRIMARY KEY,
    plant_id INTEGER NOT NULL REFERENCES plants (plant_id),
    name TEXT NOT NULL,
    line_type TEXT NOT NULL
);

CREATE TABLE work_orders (
    work_order_id INTEGER PRIMARY KEY,
    line_id INTEGER NOT NULL REFERENCES production_lines (line_id),
    product_id INTEGER NOT NULL REFERENCES products (product_id),
    planned_qty INTEGER NOT NULL,
    produced_qty INTEGER NOT NULL DEFAULT 0,
    scrap_qty INTEGER NOT NULL DEFAULT 0,
    started_at TEXT,
    finished_at TEXT,
    status TEXT NOT NULL
);

CREATE TABLE downtime_events (
    event_id INTEGER PRIMARY KEY,
    line_id INTEGER NOT NULL REFERENCES production_lines (line_id),
    started_at TEXT NOT NULL,
    ended_at TEXT,
    reason_code TEXT NOT NULL,
    minutes INTEGER NOT NULL
);

CREATE TABLE suppliers (
    supplier_id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    country TEXT NOT NULL,
    rating REAL
);

CREATE TABLE purchase_orders (
    po_id INTEGER PRIMARY KEY,
    supplier_id INTEGER NOT NULL REFERENCES suppliers (supplier_id),
    product_id INTEGER NOT NULL REFERENCES products (product_id),
    ordered_on TEXT NOT NULL,
    received_on TEXT,
    quantity INTEGER NOT NULL,
    unit_cost REAL NOT NULL
);

CREATE TABLE inventory (
    plant_id INTEGER NOT NULL REFERENCES plants (plant_id),
    product_id INTEGER NOT NULL REFERENCES products (product_id),
    snapshot_date TEXT NOT NULL,
    on_hand_qty INTEGER NOT NULL,
    PRIMARY KEY (plant_id, product_id, snapshot_date)
);

CREATE TABLE shipments (
    shipment_id INTEGER PRIMARY KEY,
    order_id INTEGER NOT NULL REFERENCES orders (order_id),
    plant_id INTEGER NOT NULL REFERENCES plants (plant_id),
    shipped_at TEXT NOT NULL,
    delivered_at TEXT,
    carrier TEXT NOT NULL,
    freight_cost REAL NOT NULL
);
