-- Schema of the manufacturing fixture (SQLite), used by the README examples.
CREATE TABLE defects (
    id INTEGER PRIMARY KEY,
    production_run_id INTEGER NOT NULL,
    defect_type TEXT NOT NULL,
    defect_count INTEGER NOT NULL,
    severity TEXT NOT NULL,
    FOREIGN KEY (production_run_id) REFERENCES production_runs(id)
);
CREATE TABLE factories (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    location TEXT NOT NULL,
    opened_on DATE NOT NULL,
    capacity_index INTEGER DEFAULT 100
);
CREATE TABLE inventory (
    id INTEGER PRIMARY KEY,
    product_id INTEGER NOT NULL,
    warehouse TEXT NOT NULL,
    on_hand INTEGER NOT NULL,
    updated_at DATETIME NOT NULL,
    FOREIGN KEY (product_id) REFERENCES products(id)
);
CREATE TABLE machine_types (
    id INTEGER PRIMARY KEY,
    model_name TEXT NOT NULL,
    manufacturer TEXT NOT NULL,
    specifications JSON
);
CREATE TABLE machines (
    id INTEGER PRIMARY KEY,
    factory_id INTEGER NOT NULL,
    name TEXT NOT NULL,
    serial_number TEXT NOT NULL UNIQUE,
    line TEXT NOT NULL,
    commissioned_on DATE NOT NULL,
    FOREIGN KEY (factory_id) REFERENCES factories(id)
);
CREATE TABLE maintenance_logs (
    id INTEGER PRIMARY KEY,
    machine_id INTEGER NOT NULL,
    performed_at DATETIME NOT NULL,
    maintenance_type TEXT NOT NULL,
    notes TEXT,
    downtime_minutes INTEGER NOT NULL,
    performed_by TEXT NOT NULL,
    FOREIGN KEY (machine_id) REFERENCES machines(id)
);
CREATE TABLE production_runs (
    id INTEGER PRIMARY KEY,
    product_id INTEGER NOT NULL,
    machine_id INTEGER NOT NULL,
    operator TEXT NOT NULL,
    shift TEXT NOT NULL,
    started_at DATETIME NOT NULL,
    ended_at DATETIME NOT NULL,
    quantity_produced INTEGER NOT NULL,
    scrap_count INTEGER NOT NULL DEFAULT 0,
    FOREIGN KEY (product_id) REFERENCES products(id),
    FOREIGN KEY (machine_id) REFERENCES machines(id)
);
CREATE TABLE products (
    id INTEGER PRIMARY KEY,
    sku TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    category TEXT NOT NULL
);
CREATE TABLE shifts (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    start_time TIME NOT NULL,
    end_time TIME NOT NULL
);
