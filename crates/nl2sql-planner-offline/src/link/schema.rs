//! The per-snapshot index that linking reads: tables, columns (words, synonyms,
//! descriptions, sample values) and foreign keys.

use std::collections::HashSet;

use serde_json::Value;

use nl2sql_state::{ColumnStatistics, SchemaSnapshot};

use crate::text::{ident_stems, plain_stems, singular, split_ident, stem, text_stems, tokenize};

pub(crate) use nl2sql_state::TypeClass;

/// One known value of a text column.
#[derive(Debug, Clone)]
pub(crate) struct Sample {
    /// The value as the statistics hold it.
    pub(crate) value: Value,
    /// Its lower-case words, as the tokeniser splits them.
    pub(crate) words: Vec<String>,
    /// Only listed, not among the column's most frequent (sampled) values: a word that
    /// names part of the schema is read as that name rather than as such a value.
    pub(crate) listed_only: bool,
}

impl Sample {
    /// Whether a span can read as this value: a word that names part of the schema
    /// (`schema_word`) is that name, not one of the values only listed.
    pub(crate) fn readable_by(&self, schema_word: bool) -> bool {
        !(schema_word && self.listed_only)
    }
}

/// A column of the index.
#[derive(Debug, Clone)]
pub(crate) struct ColumnInfo {
    /// Column name.
    pub(crate) name: String,
    /// Index of its table.
    pub(crate) table: usize,
    /// Engine type.
    pub(crate) data_type: String,
    /// Type class.
    pub(crate) class: TypeClass,
    /// Whether it is the primary key.
    pub(crate) is_pk: bool,
    /// Primary key, `id` or `…_id`: never a measure.
    pub(crate) is_key: bool,
    /// Stems of its name words.
    pub(crate) stems: Vec<String>,
    /// Stems of its name words without the built-in synonyms (`unit_cost` → `unit cost`,
    /// where `stems` reads `unit price`): what the schema literally says.
    pub(crate) plain: Vec<String>,
    /// Stems of each synonym.
    pub(crate) synonyms: Vec<Vec<String>>,
    /// Stems of its description.
    pub(crate) description: Vec<String>,
    /// A description of at most three words, every word stemmed without the synonym list
    /// ("Still sold" → `still sell`): a phrase that names the column.
    pub(crate) phrase: Vec<String>,
    /// Sample values of text columns.
    pub(crate) samples: Vec<Sample>,
    /// The samples are all the values the column holds.
    pub(crate) exhaustive: bool,
    /// A text column whose known values are all numbers (`roller_coaster.Speed` holding
    /// "55" and "51.3", `room_count CHAR(5)`), not named as an identifier: added up,
    /// averaged, compared and ranked as numbers, through a cast.
    pub(crate) numbers_as_text: bool,
}

impl ColumnInfo {
    /// True for numeric columns that are not keys.
    pub(crate) fn is_measure(&self) -> bool {
        self.is_number() && !self.is_key
    }

    /// A number column, or a text column of numbers.
    pub(crate) fn is_number(&self) -> bool {
        self.class == TypeClass::Numeric || self.numbers_as_text
    }

    /// True for date and timestamp columns.
    pub(crate) fn is_temporal(&self) -> bool {
        matches!(self.class, TypeClass::Date | TypeClass::DateTime)
    }

    /// A date or timestamp column, or one named as a date or a year (`date`, `Open_Year`,
    /// `year_join`) of a type that orders like one (text or a number), not a key.
    pub(crate) fn is_named_as_time(&self) -> bool {
        self.is_temporal()
            || (!self.is_key
                && matches!(self.class, TypeClass::Text | TypeClass::Numeric)
                && self
                    .plain
                    .iter()
                    .any(|w| *w == stem("date") || *w == stem("year")))
    }
}

/// A table of the index.
#[derive(Debug, Clone)]
pub(crate) struct TableInfo {
    /// Unqualified name.
    pub(crate) name: String,
    /// Schema name (may be empty).
    pub(crate) schema: String,
    /// Stems of its name words.
    pub(crate) stems: Vec<String>,
    /// Stems of its name words without the built-in synonyms.
    pub(crate) plain: Vec<String>,
    /// Stems of its description.
    pub(crate) description: Vec<String>,
    /// Other names of the table: a description that starts with a short noun phrase and a
    /// colon ("Order lines: one product per line") names the table by that phrase.
    pub(crate) synonyms: Vec<Vec<String>>,
    /// Indexes of its columns, in table order.
    pub(crate) columns: Vec<usize>,
}

/// A foreign key between two tables of the index.
#[derive(Debug, Clone)]
pub(crate) struct ForeignKey {
    /// The referencing table.
    pub(crate) from: usize,
    /// The referenced table.
    pub(crate) to: usize,
    /// Referencing columns.
    pub(crate) from_columns: Vec<String>,
    /// Referenced columns.
    pub(crate) to_columns: Vec<String>,
}

impl ForeignKey {
    /// Whether the column `name` (of its referencing table) is one of its referencing
    /// columns.
    pub(crate) fn is_referencing_column(&self, name: &str) -> bool {
        self.from_columns
            .iter()
            .any(|n| n.eq_ignore_ascii_case(name))
    }

    /// Whether `col` is one of its referencing columns, in its referencing table.
    pub(crate) fn leads_from(&self, col: &ColumnInfo) -> bool {
        self.from == col.table && self.is_referencing_column(&col.name)
    }
}

/// Everything the planner needs to know about one snapshot, precomputed.
#[derive(Debug, Clone, Default)]
pub(crate) struct SchemaIndex {
    /// Tables sorted by key.
    pub(crate) tables: Vec<TableInfo>,
    /// All columns.
    pub(crate) columns: Vec<ColumnInfo>,
    /// Foreign keys, in a stable order.
    pub(crate) foreign_keys: Vec<ForeignKey>,
    /// The stems of every table's and column's name words (`link/compounds.rs`).
    pub(crate) name_stems: HashSet<String>,
}

impl SchemaIndex {
    /// Builds the index of `snapshot`.
    pub(crate) fn build(snapshot: &SchemaSnapshot) -> SchemaIndex {
        let mut index = SchemaIndex::default();
        let metadata = snapshot.metadata.as_ref();
        for (key, table) in &snapshot.contract.tables {
            let t = index.tables.len();
            let tmeta = metadata.and_then(|m| m.tables.get(key));
            let mut info = TableInfo {
                name: table.table.table_name.clone(),
                schema: table.table.schema_name.clone(),
                stems: ident_stems(&table.table.table_name),
                plain: plain_stems(&table.table.table_name),
                description: tmeta
                    .and_then(|m| m.description.as_deref())
                    .map(text_stems)
                    .unwrap_or_default(),
                synonyms: tmeta
                    .and_then(|m| m.description.as_deref())
                    .and_then(description_head)
                    .into_iter()
                    .collect(),
                columns: Vec::new(),
            };
            for column in table.columns.values() {
                let cmeta = tmeta.and_then(|m| m.columns.get(&column.name));
                let class = TypeClass::of(&column.data_type);
                let lower = column.name.to_lowercase();
                let stats = cmeta.and_then(|m| m.statistics.as_ref());
                // Every value when the adapter listed them all, else the most frequent.
                let mut samples: Vec<Sample> = match stats {
                    Some(stats) if class == TypeClass::Text => known_values(stats)
                        .iter()
                        .filter_map(|v| {
                            let text = v.as_str()?;
                            let words: Vec<String> =
                                tokenize(text).into_iter().map(|t| t.lower).collect();
                            (!words.is_empty()).then(|| Sample {
                                listed_only: !stats.sample_values.contains(v),
                                value: v.clone(),
                                words,
                            })
                        })
                        .collect(),
                    _ => Vec::new(),
                };
                if class == TypeClass::Text
                    && let Some(d) = cmeta.and_then(|m| m.description.as_deref())
                {
                    for v in super::listed::listed_values(d) {
                        if !samples.iter().any(|s| s.value.as_str() == Some(v.as_str())) {
                            let words = tokenize(&v).into_iter().map(|t| t.lower).collect();
                            samples.push(Sample {
                                value: Value::String(v),
                                words,
                                listed_only: false,
                            });
                        }
                    }
                }
                // At least five different numbers: fewer are codes of a category
                // (`gender` "0"/"1", `Reign` "1"/"2", `CLASS_SECTION`), counted or
                // grouped by, not added up (learned on Spider train, where reading such
                // columns as quantities turned right answers wrong).
                let numbers_as_text = class == TypeClass::Text
                    && stats.is_some_and(|st| {
                        st.distinct_count >= 5 && holds_numbers(known_values(st))
                    })
                    && !named_as_identifier(&column.name);
                info.columns.push(index.columns.len());
                index.columns.push(ColumnInfo {
                    name: column.name.clone(),
                    table: t,
                    data_type: column.data_type.clone(),
                    class,
                    is_pk: column.is_primary_key,
                    is_key: column.is_primary_key
                        || lower == "id"
                        || lower.ends_with("_id")
                        || names_a_person_by_number(&column.name, &column.data_type),
                    stems: ident_stems(&column.name),
                    plain: plain_stems(&column.name),
                    synonyms: cmeta
                        .and_then(|m| m.synonyms.as_ref())
                        .map(|s| s.iter().map(|x| text_stems(x)).collect())
                        .unwrap_or_default(),
                    description: cmeta
                        .and_then(|m| m.description.as_deref())
                        .map(text_stems)
                        .unwrap_or_default(),
                    phrase: cmeta
                        .and_then(|m| m.description.as_deref())
                        .map(short_phrase)
                        .unwrap_or_default(),
                    exhaustive: stats.is_some_and(|st| {
                        st.distinct_count > 0
                            && usize::try_from(st.distinct_count)
                                .is_ok_and(|d| d <= known_values(st).len())
                    }),
                    samples,
                    numbers_as_text,
                });
            }
            index.tables.push(info);
        }
        for (key, table) in &snapshot.contract.tables {
            let Some(from) = index.table_by_key(key, snapshot) else {
                continue;
            };
            for fk in &table.foreign_keys {
                let to = index.tables.iter().position(|t| {
                    t.name.eq_ignore_ascii_case(&fk.referred_table.table_name)
                        && (t
                            .schema
                            .eq_ignore_ascii_case(&fk.referred_table.schema_name)
                            || fk.referred_table.schema_name.is_empty())
                });
                // A key declared twice (Spider's `Dogs` declares `owner_id` → `Owners`
                // twice; SQLite keeps both) is one way to join, not two to choose from.
                let same_columns = |a: &[String], b: &[String]| {
                    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.eq_ignore_ascii_case(y))
                };
                if let Some(to) = to
                    && !fk.constrained_columns.is_empty()
                    && fk.constrained_columns.len() == fk.referred_columns.len()
                    && !index.foreign_keys.iter().any(|k| {
                        k.from == from
                            && k.to == to
                            && same_columns(&k.from_columns, &fk.constrained_columns)
                            && same_columns(&k.to_columns, &fk.referred_columns)
                    })
                {
                    index.foreign_keys.push(ForeignKey {
                        from,
                        to,
                        from_columns: fk.constrained_columns.clone(),
                        to_columns: fk.referred_columns.clone(),
                    });
                }
            }
        }
        // A column that refers to another table's key identifies a row there, whatever
        // its type (`car_makers.Country` TEXT holding country ids): never a quantity.
        let keys: Vec<usize> = (0..index.columns.len())
            .filter(|c| {
                let col = &index.columns[*c];
                col.numbers_as_text && index.foreign_keys.iter().any(|f| f.leads_from(col))
            })
            .collect();
        for c in keys {
            index.columns[c].numbers_as_text = false;
        }
        index.name_stems = index
            .tables
            .iter()
            .flat_map(|t| &t.stems)
            .chain(index.columns.iter().flat_map(|c| &c.stems))
            .cloned()
            .collect();
        index
    }

    fn table_by_key(&self, key: &str, snapshot: &SchemaSnapshot) -> Option<usize> {
        snapshot.contract.tables.keys().position(|k| k == key)
    }

    /// The primary key of `table` when it is one column.
    pub(crate) fn single_key(&self, table: usize) -> Option<usize> {
        let mut keys = self.tables[table]
            .columns
            .iter()
            .copied()
            .filter(|c| self.columns[*c].is_pk);
        let key = keys.next()?;
        keys.next().is_none().then_some(key)
    }

    /// The column that names a row of `table`: `name`, `title`, `label`, `…_name` (its
    /// [`Self::name_column`]), then the primary key, then the first non-key text column.
    pub(crate) fn label_column(&self, table: usize) -> Option<usize> {
        let cols = &self.tables.get(table)?.columns;
        let text =
            |c: &&usize| self.columns[**c].class == TypeClass::Text && !self.columns[**c].is_key;
        self.name_column(table)
            .or_else(|| cols.iter().find(|c| self.columns[**c].is_pk).copied())
            .or_else(|| cols.iter().find(text).copied())
            .or_else(|| cols.first().copied())
    }

    /// The text column whose name says it names a row of `table`: `name`, `title`,
    /// `label`, the table's own name and "name" (`song_name`), a column named as the table
    /// (`city.City`), else one ending in "name". (Not a first text column taken for want of
    /// one: in a table with no name, `transaction_type` is a category, not a name.)
    pub(crate) fn name_column(&self, table: usize) -> Option<usize> {
        let cols = &self.tables.get(table)?.columns;
        let text =
            |c: &&usize| self.columns[**c].class == TypeClass::Text && !self.columns[**c].is_key;
        let named = |want: &str| {
            cols.iter()
                .find(|c| text(c) && self.columns[**c].name.eq_ignore_ascii_case(want))
                .copied()
        };
        // `song_name` names a song (not `artist_name`): the text column whose words are the
        // table's own name and "name".
        let own_name = || {
            let table_stems = ident_stems(&self.tables[table].name);
            let name = ident_stems("name");
            cols.iter()
                .find(|c| {
                    // A text key may be the name itself (`song_name` as the key of song).
                    let words = ident_stems(&self.columns[**c].name);
                    self.columns[**c].class == TypeClass::Text
                        && words.len() >= 2
                        && words.last() == name.last()
                        && words[..words.len() - 1] == table_stems[..]
                })
                .copied()
        };
        // `city.City`, `campuses.Campus`: a text column named as its table is its label.
        let as_table = || {
            let table_stems = ident_stems(&self.tables[table].name);
            cols.iter()
                .find(|c| text(c) && ident_stems(&self.columns[**c].name) == table_stems)
                .copied()
        };
        named("name")
            .or_else(|| named("title"))
            .or_else(|| named("label"))
            .or_else(own_name)
            .or_else(as_table)
            .or_else(|| {
                cols.iter()
                    .find(|c| text(c) && self.columns[**c].name.to_lowercase().ends_with("name"))
                    .copied()
            })
    }

    /// True when the label of `table` is only its key (it has no name column).
    pub(crate) fn label_is_key(&self, table: usize) -> bool {
        self.label_column(table)
            .is_some_and(|c| self.columns[c].is_key)
    }

    /// The text column of `table` that records a person who acted: named `…_by`, else an
    /// agent noun (`operator`, `inspector`, `technician`).
    pub(crate) fn person_column(&self, table: usize) -> Option<usize> {
        let cols = &self.tables.get(table)?.columns;
        let text = |c: usize| self.columns[c].class == TypeClass::Text && !self.columns[c].is_key;
        let by = cols
            .iter()
            .copied()
            .find(|c| text(*c) && self.columns[*c].name.to_lowercase().ends_with("_by"));
        by.or_else(|| {
            cols.iter().copied().find(|c| {
                let words = split_ident(&self.columns[*c].name);
                text(*c) && words.last().is_some_and(|w| is_agent_noun(w))
            })
        })
    }

    /// True when `from` refers to `to` by a foreign key, directly or through one table in
    /// between (`defects` → `production_runs` → `products`).
    pub(crate) fn refers_to(&self, from: usize, to: usize) -> bool {
        self.refers_directly(from, to)
            || self
                .foreign_keys
                .iter()
                .any(|f| f.from == from && f.to != from && self.refers_directly(f.to, to))
    }

    /// True when column `c` is (one of) the referencing columns of a foreign key to `to`.
    pub(crate) fn column_refers_to(&self, c: usize, to: usize) -> bool {
        let col = &self.columns[c];
        self.foreign_keys
            .iter()
            .any(|f| f.to == to && f.leads_from(col))
    }

    /// The foreign keys (indexes into `foreign_keys`, in order) that join the same two
    /// tables as key `k`, in either direction, `k` among them: more than one where the
    /// question must say which ("start" or "end" station).
    pub(crate) fn parallel_keys(&self, k: usize) -> Vec<usize> {
        let key = &self.foreign_keys[k];
        let pair = (key.from.min(key.to), key.from.max(key.to));
        (0..self.foreign_keys.len())
            .filter(|i| {
                let f = &self.foreign_keys[*i];
                (f.from.min(f.to), f.from.max(f.to)) == pair
            })
            .collect()
    }

    /// True when a foreign key of `from` refers to `to`.
    pub(crate) fn refers_directly(&self, from: usize, to: usize) -> bool {
        self.foreign_keys
            .iter()
            .any(|f| f.from == from && f.to == to)
    }

    /// The one table whose foreign keys refer to both `a` and `b` directly, if exactly one
    /// does: the link table of a many-to-many relation.
    pub(crate) fn link_table(&self, a: usize, b: usize) -> Option<usize> {
        let mut links = self.link_tables(a, b);
        match (links.next(), links.next()) {
            (Some(l), None) => Some(l),
            _ => None,
        }
    }

    /// Every table whose foreign keys refer to both `a` and `b` directly.
    pub(crate) fn link_tables(&self, a: usize, b: usize) -> impl Iterator<Item = usize> + '_ {
        (0..self.tables.len()).filter(move |&l| {
            l != a && l != b && self.refers_directly(l, a) && self.refers_directly(l, b)
        })
    }

    /// The first date or timestamp column of `table`, by column order.
    pub(crate) fn time_column(&self, table: usize) -> Option<usize> {
        self.tables
            .get(table)?
            .columns
            .iter()
            .find(|c| self.columns[**c].is_temporal())
            .copied()
    }

    /// What a ranking in time ("the most recent", "the latest", "the earliest") of `table`
    /// ranks by: its first date or timestamp column, else its one column named as a date
    /// or a year whatever its type (`races.date` kept as text, `shop.Open_Year` as an
    /// integer; a date before a year); `None` when there is none, or more than one such
    /// name to choose from.
    pub(crate) fn ranking_time_column(&self, table: usize) -> Option<usize> {
        if let Some(c) = self.time_column(table) {
            return Some(c);
        }
        // A date is finer than a year: `races.date` over `races.year`.
        let only = |word: &str| {
            let word = stem(word);
            let mut named = self.tables[table].columns.iter().copied().filter(|c| {
                let col = &self.columns[*c];
                col.is_named_as_time() && col.plain.contains(&word)
            });
            match (named.next(), named.next()) {
                (Some(c), None) => Some(c),
                _ => None,
            }
        };
        self.tables.get(table)?;
        only("date").or_else(|| only("year"))
    }

    /// The numeric column that best stands for "how much of `table`": one whose name
    /// repeats the table's word (`defects.defect_count`), else one named like a quantity.
    pub(crate) fn quantity_column(&self, table: usize) -> Option<usize> {
        let t = self.tables.get(table)?;
        let measures: Vec<usize> = t
            .columns
            .iter()
            .copied()
            .filter(|c| self.columns[*c].is_measure())
            .collect();
        let last_stem = t.stems.last().cloned().unwrap_or_default();
        measures
            .iter()
            .find(|c| self.columns[**c].stems.contains(&last_stem))
            .or(measures.iter().find(|c| {
                self.columns[**c].stems.iter().any(|s| {
                    ["quantity", "count", "amount", "total", "number"].contains(&s.as_str())
                })
            }))
            .copied()
            .or(match measures.as_slice() {
                [only] => Some(*only),
                _ => None,
            })
    }

    /// A numeric column that counts the table's own thing per row (`defects.defect_count`:
    /// the table's word with `count`, `number` or `quantity`).
    pub(crate) fn count_column(&self, table: usize) -> Option<usize> {
        let t = self.tables.get(table)?;
        let thing = t.stems.last()?;
        t.columns.iter().copied().find(|c| {
            let col = &self.columns[*c];
            col.is_measure()
                && col.stems.contains(thing)
                && col
                    .plain
                    .iter()
                    .any(|s| ["count", "number", "quantity", "qty"].contains(&s.as_str()))
        })
    }

    /// A readable singular noun for a table (`production_runs` → `production run`).
    pub(crate) fn entity_noun(&self, table: usize) -> String {
        let words = split_ident(&self.tables[table].name);
        match words.split_last() {
            Some((last, rest)) => {
                let mut out: Vec<String> = rest.to_vec();
                out.push(singular(last));
                out.join(" ")
            }
            None => self.tables[table].name.clone(),
        }
    }
}

/// The words of a description of at most three words, stemmed without synonyms; empty
/// for longer descriptions.
fn short_phrase(description: &str) -> Vec<String> {
    let words: Vec<String> = tokenize(description)
        .into_iter()
        .filter(|t| t.kind == crate::text::TokenKind::Word)
        .map(|t| stem(&t.lower))
        .collect();
    if words.len() <= 3 { words } else { Vec::new() }
}

/// The stems of a description's leading noun phrase of one to three words before a colon
/// ("Order lines: one product per line" → `order line`).
fn description_head(description: &str) -> Option<Vec<String>> {
    let (head, _) = description.split_once(':')?;
    let words: Vec<String> = tokenize(head)
        .into_iter()
        .filter(|t| t.kind == crate::text::TokenKind::Word)
        .map(|t| t.stem)
        .collect();
    (1..=3).contains(&words.len()).then_some(words)
}

/// An integer column named by one agent noun (`Advisor`, `Instructor`, `Physician`) holds
/// who, as a number (a person's key), not how much: "how many advisors" is never a sum of
/// it. A decimal column (`Silver`, `Asian`) or a longer name (`shot_power`, `cloud_cover`)
/// is not read so.
fn names_a_person_by_number(name: &str, data_type: &str) -> bool {
    let words = split_ident(name);
    let integer = data_type.to_ascii_uppercase().contains("INT");
    integer && words.len() == 1 && words.first().is_some_and(|w| is_agent_noun(w))
}

/// A word that names a person by what they do (`operator`, `advisor`, `technician`): an
/// agent-noun ending on a word longer than four letters, not one of [`NOT_PERSONS`].
fn is_agent_noun(word: &str) -> bool {
    let w = word.to_lowercase();
    ["or", "er", "ist", "ian"].iter().any(|e| w.ends_with(e))
        && w.len() > 4
        && !NOT_PERSONS.contains(&w.as_str())
}

/// Words that end like agent nouns (`-er`, `-or`, `-ist`, `-ian`) but name no person: a
/// `gender` or `major` column does not record who acted ("who is the oldest person" over
/// a table whose name is its key was answered with the gender).
const NOT_PERSONS: &[&str] = &[
    "gender",
    "number",
    "order",
    "color",
    "colour",
    "floor",
    "door",
    "sector",
    "factor",
    "major",
    "minor",
    "error",
    "motor",
    "monitor",
    "indicator",
    "behavior",
    "behaviour",
    "letter",
    "quarter",
    "center",
    "character",
    "chapter",
    "layer",
    "paper",
    "header",
    "filter",
    "parameter",
    "register",
    "counter",
    "folder",
    "answer",
    "other",
    "cover",
    "water",
    "weather",
    "border",
    "power",
    "career",
    "poster",
    "trailer",
    "banner",
    "container",
    "computer",
    "checklist",
    "playlist",
    "wishlist",
    "median",
    "meridian",
    "interior",
    "exterior",
    "flavor",
    "flavour",
    "labor",
    "honor",
    "favor",
    "mirror",
    "tier",
    "winter",
    "summer",
    "semester",
    "trimester",
    "super",
    "cluster",
    "roster",
];

/// The values of a column the planner knows: all of them when the adapter listed them
/// (`values`), else its most frequent ones (`sample_values`).
fn known_values(stats: &ColumnStatistics) -> &[Value] {
    if stats.values.is_empty() {
        &stats.sample_values
    } else {
        &stats.values
    }
}

/// Whether known values are numbers written as text: at least two, every one a decimal
/// number (spaces around it allowed), none with a leading zero (`007`, `02134`: a code,
/// not a quantity).
fn holds_numbers(values: &[Value]) -> bool {
    values.len() >= 2
        && values.iter().all(|v| {
            let Some(text) = v.as_str().map(str::trim) else {
                return false;
            };
            let digits = text.strip_prefix('-').unwrap_or(text);
            !digits.is_empty()
                && digits.chars().all(|c| c.is_ascii_digit() || c == '.')
                && digits.chars().filter(|c| *c == '.').count() <= 1
                && digits.chars().any(|c| c.is_ascii_digit())
                && !(digits.len() > 1 && digits.starts_with('0') && !digits.starts_with("0."))
        })
}

/// Whether a column's name says it identifies rather than measures: its last word is a
/// code, a number, a zip or postal code, a phone or fax (`apt_number`, `zip_postcode`,
/// `Phone`).
fn named_as_identifier(name: &str) -> bool {
    split_ident(name).last().is_some_and(|w| {
        matches!(
            w.to_ascii_lowercase().as_str(),
            "code"
                | "number"
                | "no"
                | "num"
                | "nbr"
                | "zip"
                | "zipcode"
                | "postcode"
                | "phone"
                | "fax"
                | "id"
                | "key"
                | "ssn"
        )
    })
}
