//! `supply.sqlite`: suppliers, materials, purchase orders, deliveries and inventory per
//! plant (keyed by the shared `factory_code`).

use nl2sql_adapter::{
    DatasetColumn as Col, DatasetForeignKey as Fk, DatasetSpec, DatasetTable, DatasetType as T,
    DatasetValue,
};

use super::catalog::{
    CITIES, DAYS, FACTORIES, SEED, boolean, date, first_day, id, int, real, text,
};
use super::rng::{Rng, money, round1};

const SUPPLIERS: usize = 60;
const PURCHASE_ORDERS: usize = 20_000;

const SUPPLIER_STEMS: &[&str] = &[
    "Acme",
    "Northern",
    "Precision",
    "Global",
    "Summit",
    "Apex",
    "Allied",
    "Pioneer",
    "Atlas",
    "Vertex",
    "Keystone",
    "Meridian",
];
const SUPPLIER_TRADES: &[&str] = &[
    "Metals",
    "Polymers",
    "Components",
    "Industrial Supply",
    "Castings",
    "Electronics",
    "Fasteners",
];
/// Material name, category, unit, standard cost.
const MATERIALS: &[(&str, &str, &str, f64)] = &[
    ("Cold Rolled Steel Sheet", "Metals", "kg", 1.35),
    ("Stainless Steel Bar 304", "Metals", "kg", 4.2),
    ("Aluminium Extrusion 6061", "Metals", "kg", 3.6),
    ("Copper Wire 2.5mm", "Metals", "m", 0.9),
    ("Cast Iron Housing Blank", "Metals", "pcs", 38.0),
    ("Brass Fitting Blank", "Metals", "pcs", 2.4),
    ("ABS Pellets", "Polymers", "kg", 2.1),
    ("Nylon 66 Pellets", "Polymers", "kg", 3.3),
    ("PTFE Seal Ring", "Polymers", "pcs", 0.85),
    ("Nitrile O-Ring Kit", "Polymers", "pcs", 1.6),
    ("Hall Effect Sensor Chip", "Electronics", "pcs", 1.9),
    ("Motor Controller PCB", "Electronics", "pcs", 24.5),
    ("Wiring Harness", "Electronics", "pcs", 11.0),
    ("Hex Bolt M8", "Fasteners", "pcs", 0.12),
    ("Lock Nut M8", "Fasteners", "pcs", 0.06),
    ("Socket Screw M5", "Fasteners", "pcs", 0.09),
    ("Hydraulic Oil ISO 46", "Lubricants", "l", 3.8),
    ("Lithium Grease", "Lubricants", "kg", 6.5),
    ("Corrugated Shipping Box", "Packaging", "pcs", 1.1),
    ("Wooden Pallet", "Packaging", "pcs", 9.5),
];
const PO_STATUSES: &[&str] = &["Received", "Shipped", "Open", "Cancelled"];
const CARRIERS: &[&str] = &[
    "DHL Freight",
    "Maersk",
    "UPS Supply Chain",
    "Kuehne+Nagel",
    "DB Schenker",
    "FedEx Freight",
];

/// The supply database.
pub(crate) fn spec() -> DatasetSpec {
    let mut rng = Rng::new(SEED, "supply");
    let suppliers = suppliers(&mut rng);
    let (materials, preferred) = materials(&mut rng);
    let (orders, received) = purchase_orders(&mut rng, &preferred);
    let deliveries = deliveries(&mut rng, &received);
    let inventory = inventory(&mut rng);
    DatasetSpec {
        tables: vec![suppliers, materials, orders, deliveries, inventory],
    }
}

fn suppliers(rng: &mut Rng) -> DatasetTable {
    let rows = (0..SUPPLIERS)
        .map(|i| {
            let name = format!(
                "{} {}",
                SUPPLIER_STEMS[i % SUPPLIER_STEMS.len()],
                SUPPLIER_TRADES[(i / SUPPLIER_STEMS.len() + i) % SUPPLIER_TRADES.len()]
            );
            let (city, country) = *rng.pick(CITIES);
            let slug: String = name
                .chars()
                .filter(char::is_ascii_alphanumeric)
                .collect::<String>()
                .to_lowercase();
            vec![
                id(i + 1),
                text(format!("SUP-{:03}", i + 1)),
                text(name),
                text(country),
                text(city),
                real(round1(rng.between(2.5, 5.0))),
                boolean(rng.chance(0.3)),
                text(format!("orders@{slug}.example.com")),
            ]
        })
        .collect();
    DatasetTable {
        name: "suppliers".to_owned(),
        description: "Vendors of raw materials and bought-in components.".to_owned(),
        columns: vec![
            Col::key("supplier_id", "Surrogate key of the supplier"),
            Col::new("supplier_code", T::Text, "Supplier code (SUP-001 ...)"),
            Col::new("name", T::Text, "Supplier name"),
            Col::new("country", T::Text, "Supplier country"),
            Col::new("city", T::Text, "Supplier city"),
            Col::new("rating", T::Real, "Quality rating from 2.5 to 5.0"),
            Col::new(
                "is_preferred",
                T::Boolean,
                "Whether the supplier is on the preferred list",
            ),
            Col::new("contact_email", T::Text, "Order desk e-mail address"),
        ],
        foreign_keys: vec![],
        rows,
    }
}

/// The materials table and each material's preferred supplier index.
fn materials(rng: &mut Rng) -> (DatasetTable, Vec<Option<usize>>) {
    let mut rows = Vec::new();
    let mut preferred = Vec::new();
    for (i, (name, category, unit, cost)) in MATERIALS.iter().enumerate() {
        let p = rng.chance(0.85).then(|| rng.below(SUPPLIERS));
        preferred.push(p);
        rows.push(vec![
            id(i + 1),
            text(format!("MAT-{:04}", i + 1)),
            text(*name),
            text(*category),
            text(*unit),
            real(*cost),
            p.map_or(DatasetValue::Null, |s| id(s + 1)),
        ]);
    }
    let table = DatasetTable {
        name: "materials".to_owned(),
        description: "Raw materials and components bought from suppliers.".to_owned(),
        columns: vec![
            Col::key("material_id", "Surrogate key of the material"),
            Col::new("material_code", T::Text, "Material code (MAT-0001 ...)"),
            Col::new("name", T::Text, "Material name"),
            Col::new(
                "category",
                T::Text,
                "Metals, Polymers, Electronics, Fasteners, Lubricants or Packaging",
            ),
            Col::new("unit", T::Text, "Unit of measure (kg, pcs, m, l)"),
            Col::new("standard_cost", T::Real, "Standard cost per unit in USD"),
            Col::new(
                "preferred_supplier_id",
                T::Integer,
                "Preferred supplier, NULL when none",
            )
            .nullable(),
        ],
        foreign_keys: vec![Fk::new("preferred_supplier_id", "suppliers", "supplier_id")],
        rows,
    };
    (table, preferred)
}

/// A purchase order that has (or will have) deliveries.
struct Received {
    po: usize,
    quantity: i64,
    expected_on: i32,
    ordered_on: i32,
}

fn purchase_orders(rng: &mut Rng, preferred: &[Option<usize>]) -> (DatasetTable, Vec<Received>) {
    let mut rows = Vec::with_capacity(PURCHASE_ORDERS);
    let mut received = Vec::new();
    for i in 0..PURCHASE_ORDERS {
        let day = (i * DAYS as usize / PURCHASE_ORDERS) as i32;
        let ordered_on = first_day() + day;
        let m = rng.below(MATERIALS.len());
        let supplier = match preferred[m] {
            Some(s) if rng.chance(0.6) => s,
            _ => rng.below(SUPPLIERS),
        };
        let quantity = match MATERIALS[m].2 {
            "pcs" => rng.range(20, 400) * 25,
            _ => rng.range(10, 400) * 10,
        };
        let lead = rng.range(7, 45);
        let expected_on = ordered_on + lead as i32;
        let age = DAYS - day;
        let status = if age < 20 {
            PO_STATUSES[rng.weighted(&[10, 45, 45, 0])]
        } else if age < 50 {
            PO_STATUSES[rng.weighted(&[60, 30, 8, 2])]
        } else {
            PO_STATUSES[rng.weighted(&[96, 0, 0, 4])]
        };
        if status == "Received" {
            received.push(Received {
                po: i,
                quantity,
                expected_on,
                ordered_on,
            });
        }
        rows.push(vec![
            id(i + 1),
            text(format!("PO-{}-{:06}", 2023 + i32::from(day >= 365), i + 1)),
            id(supplier + 1),
            text(FACTORIES[rng.below(FACTORIES.len())].code),
            id(m + 1),
            int(quantity),
            real(money(MATERIALS[m].3 * rng.between(0.9, 1.15))),
            date(ordered_on),
            date(expected_on),
            text(status),
        ]);
    }
    let table = DatasetTable {
        name: "purchase_orders".to_owned(),
        description:
            "Purchase orders for materials, placed by a plant (factory_code) with a supplier."
                .to_owned(),
        columns: vec![
            Col::key("po_id", "Surrogate key of the purchase order"),
            Col::new("po_number", T::Text, "Purchase order number"),
            Col::new(
                "supplier_id",
                T::Integer,
                "Supplier the order is placed with",
            ),
            Col::new(
                "factory_code",
                T::Text,
                "Ordering plant; matches factories.factory_code in the operations database",
            ),
            Col::new("material_id", T::Integer, "Material ordered"),
            Col::new(
                "quantity",
                T::Integer,
                "Quantity ordered, in the material's unit",
            ),
            Col::new("unit_price", T::Real, "Agreed price per unit in USD"),
            Col::new("ordered_on", T::Date, "Order date"),
            Col::new("expected_on", T::Date, "Promised delivery date"),
            Col::new("status", T::Text, "Open, Shipped, Received or Cancelled"),
        ],
        foreign_keys: vec![
            Fk::new("supplier_id", "suppliers", "supplier_id"),
            Fk::new("material_id", "materials", "material_id"),
        ],
        rows,
    };
    (table, received)
}

fn deliveries(rng: &mut Rng, received: &[Received]) -> DatasetTable {
    let mut rows = Vec::new();
    for r in received {
        let parts = if rng.chance(0.12) { 2 } else { 1 };
        for k in 0..parts {
            let quantity = if parts == 1 {
                r.quantity
            } else if k == 0 {
                r.quantity / 2
            } else {
                r.quantity - r.quantity / 2
            };
            let delivered_on =
                (r.expected_on + rng.range(-6, 9) as i32 + 3 * k).max(r.ordered_on + 2);
            let rejected = if rng.chance(0.15) {
                (quantity as f64 * rng.between(0.0, 0.05)).round() as i64
            } else {
                0
            };
            rows.push(vec![
                id(rows.len() + 1),
                id(r.po + 1),
                date(delivered_on),
                int(quantity),
                int(rejected),
                text(*rng.pick(CARRIERS)),
                boolean(delivered_on <= r.expected_on),
            ]);
        }
    }
    DatasetTable {
        name: "deliveries".to_owned(),
        description: "Goods receipts against purchase orders; an order may arrive in two parts."
            .to_owned(),
        columns: vec![
            Col::key("delivery_id", "Surrogate key of the delivery"),
            Col::new("po_id", T::Integer, "Purchase order delivered"),
            Col::new("delivered_on", T::Date, "Date the goods arrived"),
            Col::new("quantity_received", T::Integer, "Quantity received"),
            Col::new(
                "quantity_rejected",
                T::Integer,
                "Quantity rejected at inspection",
            ),
            Col::new("carrier", T::Text, "Freight carrier"),
            Col::new(
                "on_time",
                T::Boolean,
                "Arrived on or before the promised date",
            ),
        ],
        foreign_keys: vec![Fk::new("po_id", "purchase_orders", "po_id")],
        rows,
    }
}

fn inventory(rng: &mut Rng) -> DatasetTable {
    let mut rows = Vec::new();
    for f in FACTORIES {
        for (m, (_, _, unit, _)) in MATERIALS.iter().enumerate() {
            let scale = if *unit == "pcs" { 50 } else { 10 };
            let reorder = rng.range(10, 80) * scale;
            rows.push(vec![
                id(rows.len() + 1),
                text(f.code),
                id(m + 1),
                int((reorder as f64 * rng.between(0.3, 3.5)).round() as i64),
                int(reorder),
                date(first_day() + DAYS - 1 - rng.range(0, 30) as i32),
            ]);
        }
    }
    DatasetTable {
        name: "inventory".to_owned(),
        description:
            "Stock on hand of each material at each plant (factory_code), as last counted."
                .to_owned(),
        columns: vec![
            Col::key("inventory_id", "Surrogate key of the stock record"),
            Col::new(
                "factory_code",
                T::Text,
                "Plant holding the stock; matches factories.factory_code in the operations database",
            ),
            Col::new("material_id", T::Integer, "Material in stock"),
            Col::new("quantity_on_hand", T::Integer, "Quantity on hand"),
            Col::new("reorder_point", T::Integer, "Quantity at which to reorder"),
            Col::new("last_counted_on", T::Date, "Date of the last stock count"),
        ],
        foreign_keys: vec![Fk::new("material_id", "materials", "material_id")],
        rows,
    }
}
