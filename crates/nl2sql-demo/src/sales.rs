//! `sales.sqlite`: customers, products (keyed by the shared SKU), orders, order items
//! (the largest table) and returns.

use nl2sql_adapter::{
    DatasetColumn as Col, DatasetForeignKey as Fk, DatasetSpec, DatasetTable, DatasetType as T,
};

use super::catalog::{
    CATEGORIES, CITIES, DAYS, FACTORIES, Product, SEED, boolean, date, first_day, id, int, real,
    text,
};
use super::rng::{Rng, money};

const CUSTOMERS: usize = 2_000;
const ORDERS: usize = 40_000;

const CUSTOMER_STEMS: &[&str] = &[
    "Northwind",
    "Contoso",
    "Fabrikam",
    "Globex",
    "Initech",
    "Umbrella",
    "Vandelay",
    "Tyrell",
    "Wonka",
    "Soylent",
    "Hooli",
    "Cyberdyne",
    "Stark",
    "Wayne",
    "Oscorp",
    "Aperture",
    "Gringotts",
    "Monarch",
    "Nakatomi",
    "Duff",
];
const INDUSTRIES: &[&str] = &[
    "Automotive",
    "Aerospace",
    "Energy",
    "Food Processing",
    "Water Utilities",
    "Marine",
    "Mining",
    "Agriculture",
    "Chemicals",
    "Construction",
];
const LEGAL: &[&str] = &["Inc.", "GmbH", "Ltd.", "S.A.", "Co.", "LLC"];
const SEGMENTS: &[&str] = &["Enterprise", "Mid-Market", "SMB"];
const ORDER_STATUSES: &[&str] = &["Delivered", "Shipped", "Processing", "Cancelled"];
const CHANNELS: &[&str] = &["Direct", "Distributor", "Online"];
const RETURN_REASONS: &[&str] = &[
    "Damaged in transit",
    "Defective",
    "Wrong item",
    "No longer needed",
];

/// The sales database.
pub(crate) fn spec(products: &[Product]) -> DatasetSpec {
    let mut rng = Rng::new(SEED, "sales");
    let (customers, segments) = customers(&mut rng);
    let product_table = product_table(products);
    let (orders, items, returns) = orders(&mut rng, products, &segments);
    DatasetSpec {
        tables: vec![customers, product_table, orders, items, returns],
    }
}

fn customers(rng: &mut Rng) -> (DatasetTable, Vec<usize>) {
    let mut rows = Vec::with_capacity(CUSTOMERS);
    let mut segments = Vec::with_capacity(CUSTOMERS);
    for i in 0..CUSTOMERS {
        let industry = INDUSTRIES[(i / CUSTOMER_STEMS.len()) % INDUSTRIES.len()];
        let stem = CUSTOMER_STEMS[i % CUSTOMER_STEMS.len()];
        let legal = LEGAL[(i / (CUSTOMER_STEMS.len() * INDUSTRIES.len())) % LEGAL.len()];
        let (city, country) = *rng.pick(CITIES);
        // The first customers are the big ones (orders are skewed towards low ids).
        let segment = if i < CUSTOMERS / 20 {
            0
        } else if i < CUSTOMERS / 4 {
            1
        } else {
            2
        };
        segments.push(segment);
        rows.push(vec![
            id(i + 1),
            text(format!("CUST-{:05}", i + 1)),
            text(format!("{stem} {industry} {legal}")),
            text(industry),
            text(SEGMENTS[segment]),
            text(country),
            text(city),
            text(format!(
                "purchasing.{:05}@{}.example.com",
                i + 1,
                stem.to_lowercase()
            )),
            date(first_day() - 1500 + rng.range(0, 1500 + i64::from(DAYS) - 60) as i32),
        ]);
    }
    let table = DatasetTable {
        name: "customers".to_owned(),
        description: "Business customers buying the plants' products.".to_owned(),
        columns: vec![
            Col::key("customer_id", "Surrogate key of the customer"),
            Col::new(
                "customer_code",
                T::Text,
                "Customer account code (CUST-00001 ...)",
            ),
            Col::new("name", T::Text, "Company name"),
            Col::new("industry", T::Text, "Customer industry"),
            Col::new("segment", T::Text, "Enterprise, Mid-Market or SMB"),
            Col::new("country", T::Text, "Billing country"),
            Col::new("city", T::Text, "Billing city"),
            Col::new(
                "email",
                T::Text,
                "Purchasing contact e-mail (personal data)",
            ),
            Col::new("created_on", T::Date, "Date the account was opened"),
        ],
        foreign_keys: vec![],
        rows,
    };
    (table, segments)
}

fn product_table(products: &[Product]) -> DatasetTable {
    let rows = products
        .iter()
        .enumerate()
        .map(|(i, p)| {
            vec![
                id(i + 1),
                text(p.sku.as_str()),
                text(p.name.as_str()),
                text(CATEGORIES[p.category].name),
                real(p.unit_price),
                real(p.unit_cost),
                text(FACTORIES[p.factory].code),
                date(p.launched_on),
                boolean(i % 13 != 7),
            ]
        })
        .collect();
    DatasetTable {
        name: "products".to_owned(),
        description: "The product catalog. sku matches production_runs.product_sku in the operations database.".to_owned(),
        columns: vec![
            Col::key("product_id", "Surrogate key of the product"),
            Col::new("sku", T::Text, "Stock keeping unit, shared with the operations database"),
            Col::new("name", T::Text, "Product name"),
            Col::new("category", T::Text, "Pumps, Valves, Motors, Gearboxes, Sensors or Bearings"),
            Col::new("unit_price", T::Real, "List price per unit in USD"),
            Col::new("unit_cost", T::Real, "Standard manufacturing cost per unit in USD"),
            Col::new("made_in_factory_code", T::Text, "Plant that makes the product; matches factories.factory_code in the operations database"),
            Col::new("launched_on", T::Date, "Launch date"),
            Col::new("is_active", T::Boolean, "Still sold"),
        ],
        foreign_keys: vec![],
        rows,
    }
}

fn orders(
    rng: &mut Rng,
    products: &[Product],
    segments: &[usize],
) -> (DatasetTable, DatasetTable, DatasetTable) {
    let mut orders = Vec::with_capacity(ORDERS);
    let mut items = Vec::with_capacity(ORDERS * 3);
    let mut returns = Vec::new();
    // Cheap products sell in bigger quantities.
    let popularity: Vec<u32> = products
        .iter()
        .enumerate()
        .map(|(i, p)| 2 + (3000.0 / p.unit_price.max(10.0)).min(60.0) as u32 + (i % 5) as u32)
        .collect();
    for o in 0..ORDERS {
        let day = (o * DAYS as usize / ORDERS) as i32;
        let order_date = first_day() + day;
        let customer = rng.skewed(segments.len());
        let age = DAYS - day;
        let status = if age < 7 {
            ORDER_STATUSES[rng.weighted(&[0, 30, 68, 2])]
        } else if age < 21 {
            ORDER_STATUSES[rng.weighted(&[55, 35, 7, 3])]
        } else {
            ORDER_STATUSES[rng.weighted(&[96, 0, 0, 4])]
        };
        let discount_base = [10.0, 5.0, 0.0][segments[customer]];
        let lines = rng.range(1, 5);
        let mut total = 0.0;
        let mut first_product = None;
        for _ in 0..lines {
            let p = rng.weighted(&popularity);
            first_product.get_or_insert(p);
            let product = &products[p];
            let quantity = (rng.range(1, 12) * (1 + (400.0 / product.unit_price) as i64)).min(500);
            let discount = discount_base + [0.0, 0.0, 2.5, 5.0][rng.below(4)];
            let unit_price = money(product.unit_price * rng.between(0.97, 1.03));
            let amount = money(quantity as f64 * unit_price * (1.0 - discount / 100.0));
            total += amount;
            let item = items.len();
            items.push(vec![
                id(item + 1),
                id(o + 1),
                id(p + 1),
                int(quantity),
                real(unit_price),
                real(discount),
                real(amount),
            ]);
            if status == "Delivered" && rng.chance(0.025) {
                let q = rng.range(1, quantity);
                returns.push(vec![
                    id(returns.len() + 1),
                    id(item + 1),
                    date((order_date + rng.range(5, 60) as i32).min(first_day() + DAYS - 1)),
                    int(q),
                    text(*rng.pick(RETURN_REASONS)),
                    real(money(q as f64 * unit_price * (1.0 - discount / 100.0))),
                ]);
            }
        }
        let factory = first_product.map_or(0, |p| products[p].factory);
        orders.push(vec![
            id(o + 1),
            text(format!("SO-{}-{:06}", 2023 + i32::from(day >= 365), o + 1)),
            id(customer + 1),
            date(order_date),
            text(FACTORIES[factory].code),
            text(status),
            text(CHANNELS[rng.weighted(&[50, 35, 15])]),
            real(money(total)),
        ]);
    }
    let orders = DatasetTable {
        name: "orders".to_owned(),
        description: "Customer sales orders; total_amount is the sum of the order's items."
            .to_owned(),
        columns: vec![
            Col::key("order_id", "Surrogate key of the order"),
            Col::new("order_number", T::Text, "Sales order number"),
            Col::new("customer_id", T::Integer, "Ordering customer"),
            Col::new("order_date", T::Date, "Date the order was placed"),
            Col::new(
                "ship_from_factory_code",
                T::Text,
                "Plant that ships the order; matches factories.factory_code in the operations database",
            ),
            Col::new(
                "status",
                T::Text,
                "Processing, Shipped, Delivered or Cancelled",
            ),
            Col::new("channel", T::Text, "Direct, Distributor or Online"),
            Col::new(
                "total_amount",
                T::Real,
                "Order value in USD after discounts",
            ),
        ],
        foreign_keys: vec![Fk::new("customer_id", "customers", "customer_id")],
        rows: orders,
    };
    let items = DatasetTable {
        name: "order_items".to_owned(),
        description: "Order lines: one product, quantity and price per line.".to_owned(),
        columns: vec![
            Col::key("order_item_id", "Surrogate key of the order line"),
            Col::new("order_id", T::Integer, "Order the line belongs to"),
            Col::new("product_id", T::Integer, "Product sold"),
            Col::new("quantity", T::Integer, "Units sold"),
            Col::new(
                "unit_price",
                T::Real,
                "Price per unit in USD before discount",
            ),
            Col::new("discount_pct", T::Real, "Discount in percent"),
            Col::new(
                "line_amount",
                T::Real,
                "quantity * unit_price after discount, in USD",
            ),
        ],
        foreign_keys: vec![
            Fk::new("order_id", "orders", "order_id"),
            Fk::new("product_id", "products", "product_id"),
        ],
        rows: items,
    };
    let returns = DatasetTable {
        name: "returns".to_owned(),
        description: "Returned goods against delivered order lines.".to_owned(),
        columns: vec![
            Col::key("return_id", "Surrogate key of the return"),
            Col::new("order_item_id", T::Integer, "Order line returned"),
            Col::new("returned_on", T::Date, "Date the goods came back"),
            Col::new("quantity", T::Integer, "Units returned"),
            Col::new(
                "reason",
                T::Text,
                "Damaged in transit, Defective, Wrong item or No longer needed",
            ),
            Col::new("refund_amount", T::Real, "Refund in USD"),
        ],
        foreign_keys: vec![Fk::new("order_item_id", "order_items", "order_item_id")],
        rows: returns,
    };
    (orders, items, returns)
}
