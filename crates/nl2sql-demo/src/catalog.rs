//! The business keys the three demo databases share (factory codes, product SKUs), the
//! demo's calendar, and small builders for dataset values.

use nl2sql_adapter::DatasetValue;
use nl2sql_adapter::dataset::days_from_civil;

use super::rng::{Rng, money};

/// The seed of every demo table.
pub(crate) const SEED: u64 = 0x6e6c_3273_716c_2024;

/// How many days the demo covers: 2023-01-01 to 2024-12-31.
pub(crate) const DAYS: i32 = 731;

/// 2023-01-01, in days since 1970-01-01.
pub(crate) fn first_day() -> i32 {
    days_from_civil(2023, 1, 1)
}

/// Seconds since 1970-01-01 of `day` at `minute` past midnight.
pub(crate) fn at(day: i32, minute: i64) -> i64 {
    i64::from(day) * 86_400 + minute * 60
}

/// A factory: the key operations, supply and sales share.
pub(crate) struct Factory {
    pub(crate) code: &'static str,
    pub(crate) name: &'static str,
    pub(crate) city: &'static str,
    pub(crate) country: &'static str,
    pub(crate) opened: (i32, u32, u32),
}

/// The factories, by `factory_id` - 1.
pub(crate) const FACTORIES: &[Factory] = &[
    Factory {
        code: "DET",
        name: "Detroit Assembly",
        city: "Detroit",
        country: "USA",
        opened: (1998, 4, 1),
    },
    Factory {
        code: "MTY",
        name: "Monterrey Components",
        city: "Monterrey",
        country: "Mexico",
        opened: (2006, 9, 15),
    },
    Factory {
        code: "LYO",
        name: "Lyon Precision Works",
        city: "Lyon",
        country: "France",
        opened: (2001, 3, 12),
    },
    Factory {
        code: "STR",
        name: "Stuttgart Drive Systems",
        city: "Stuttgart",
        country: "Germany",
        opened: (1994, 6, 20),
    },
    Factory {
        code: "PNQ",
        name: "Pune Fabrication",
        city: "Pune",
        country: "India",
        opened: (2012, 1, 9),
    },
    Factory {
        code: "NGO",
        name: "Nagoya Motion Plant",
        city: "Nagoya",
        country: "Japan",
        opened: (2009, 11, 2),
    },
];

/// A product category: its SKU prefix, its product names and its price band.
pub(crate) struct Category {
    pub(crate) name: &'static str,
    pub(crate) prefix: &'static str,
    pub(crate) models: &'static [&'static str],
    pub(crate) price: (f64, f64),
}

/// The product categories; production line `j` of factory `i` makes category
/// `(i + j) % CATEGORIES.len()`.
pub(crate) const CATEGORIES: &[Category] = &[
    Category {
        name: "Pumps",
        prefix: "PMP",
        models: &[
            "Centrifugal Pump",
            "Hydraulic Pump",
            "Gear Pump",
            "Diaphragm Pump",
        ],
        price: (450.0, 2400.0),
    },
    Category {
        name: "Valves",
        prefix: "VLV",
        models: &["Ball Valve", "Butterfly Valve", "Check Valve", "Gate Valve"],
        price: (60.0, 650.0),
    },
    Category {
        name: "Motors",
        prefix: "MTR",
        models: &[
            "Induction Motor",
            "Servo Motor",
            "Stepper Motor",
            "Brushless DC Motor",
        ],
        price: (300.0, 3200.0),
    },
    Category {
        name: "Gearboxes",
        prefix: "GBX",
        models: &[
            "Planetary Gearbox",
            "Helical Gearbox",
            "Worm Gearbox",
            "Bevel Gearbox",
        ],
        price: (520.0, 4100.0),
    },
    Category {
        name: "Sensors",
        prefix: "SNS",
        models: &[
            "Pressure Sensor",
            "Temperature Sensor",
            "Proximity Sensor",
            "Flow Sensor",
        ],
        price: (35.0, 420.0),
    },
    Category {
        name: "Bearings",
        prefix: "BRG",
        models: &[
            "Ball Bearing",
            "Roller Bearing",
            "Thrust Bearing",
            "Needle Bearing",
        ],
        price: (12.0, 260.0),
    },
];

/// Production lines per factory.
pub(crate) const LINES_PER_FACTORY: usize = 4;

/// A product: the SKU operations and sales share.
pub(crate) struct Product {
    pub(crate) sku: String,
    pub(crate) name: String,
    pub(crate) category: usize,
    pub(crate) unit_price: f64,
    pub(crate) unit_cost: f64,
    /// Index into [`FACTORIES`] of the plant that makes it (one of those with a line
    /// of its category).
    pub(crate) factory: usize,
    pub(crate) launched_on: i32,
}

/// The product catalog, by `product_id` - 1: every category model in two sizes.
pub(crate) fn products() -> Vec<Product> {
    let mut rng = Rng::new(SEED, "products");
    let mut out = Vec::new();
    for (c, cat) in CATEGORIES.iter().enumerate() {
        let makers: Vec<usize> = (0..FACTORIES.len())
            .filter(|f| (0..LINES_PER_FACTORY).any(|j| (f + j) % CATEGORIES.len() == c))
            .collect();
        for (m, model) in cat.models.iter().enumerate() {
            for (s, size) in ["S", "L"].iter().enumerate() {
                let n = out.len() + 1;
                let price = money(rng.between(cat.price.0, cat.price.1) * (1.0 + s as f64 * 0.6));
                let initials: String = model
                    .split_whitespace()
                    .filter_map(|w| w.chars().next())
                    .collect();
                out.push(Product {
                    sku: format!("{}-{:04}", cat.prefix, 1000 + 10 * m + s + c * 100),
                    name: format!("{model} {initials}-{}{size}", 100 * (m + 1)),
                    category: c,
                    unit_price: price,
                    unit_cost: money(price * rng.between(0.52, 0.71)),
                    factory: makers[(n + m) % makers.len()],
                    launched_on: days_from_civil(2015 + (n % 8) as i32, 1 + (n % 12) as u32, 1),
                });
            }
        }
    }
    out
}

/// Cities with their country, for suppliers and customers.
pub(crate) const CITIES: &[(&str, &str)] = &[
    ("Chicago", "USA"),
    ("Houston", "USA"),
    ("Cleveland", "USA"),
    ("Toronto", "Canada"),
    ("Monterrey", "Mexico"),
    ("Sao Paulo", "Brazil"),
    ("Hamburg", "Germany"),
    ("Munich", "Germany"),
    ("Lyon", "France"),
    ("Milan", "Italy"),
    ("Rotterdam", "Netherlands"),
    ("Gdansk", "Poland"),
    ("Birmingham", "United Kingdom"),
    ("Pune", "India"),
    ("Chennai", "India"),
    ("Nagoya", "Japan"),
    ("Busan", "South Korea"),
    ("Shenzhen", "China"),
    ("Bangkok", "Thailand"),
    ("Melbourne", "Australia"),
];

/// Given names, for supervisors and contacts.
pub(crate) const FIRST_NAMES: &[&str] = &[
    "Maria", "James", "Aiko", "Lukas", "Priya", "Carlos", "Emma", "Wei", "Fatima", "Noah", "Sofia",
    "Ravi", "Hannah", "Mateo", "Yuki", "Olivia", "Jonas", "Amara", "Diego", "Chloe",
];

/// Family names.
pub(crate) const LAST_NAMES: &[&str] = &[
    "Garcia",
    "Smith",
    "Tanaka",
    "Muller",
    "Sharma",
    "Lopez",
    "Dubois",
    "Chen",
    "Haddad",
    "Johnson",
    "Rossi",
    "Patel",
    "Schmidt",
    "Hernandez",
    "Sato",
    "Brown",
    "Novak",
    "Okafor",
    "Silva",
    "Martin",
];

/// A person's name.
pub(crate) fn person(rng: &mut Rng) -> String {
    format!("{} {}", rng.pick(FIRST_NAMES), rng.pick(LAST_NAMES))
}

/// An integer value.
pub(crate) fn int(v: impl Into<i64>) -> DatasetValue {
    DatasetValue::Integer(v.into())
}

/// An index as an integer value (ids are 1-based: pass `i + 1`).
pub(crate) fn id(v: usize) -> DatasetValue {
    DatasetValue::Integer(v as i64)
}

/// A text value.
pub(crate) fn text(v: impl Into<String>) -> DatasetValue {
    DatasetValue::Text(v.into())
}

/// A float value.
pub(crate) fn real(v: f64) -> DatasetValue {
    DatasetValue::Real(v)
}

/// A date value.
pub(crate) fn date(days: i32) -> DatasetValue {
    DatasetValue::Date(days)
}

/// A timestamp value.
pub(crate) fn ts(seconds: i64) -> DatasetValue {
    DatasetValue::Timestamp(seconds)
}

/// A boolean value.
pub(crate) fn boolean(v: bool) -> DatasetValue {
    DatasetValue::Boolean(v)
}
