//! Schema linking: a per-snapshot index of tables, columns (words, synonyms, descriptions,
//! sample values) and foreign keys, and the matcher that links question words and phrases
//! to them with scores. Ties are broken by context (tables mentioned elsewhere) and then by
//! name, so the outcome is deterministic.
//!
//! In order: capitalised names and exact known values (`values`), boolean adjectives
//! (`booleans`), names (`names`), then words inside multi-word values (`values`). `listed`
//! reads the values a description enumerates into the known values.

use serde_json::Value;

use nl2sql_state::SchemaSnapshot;

use super::text::{
    Token, ident_stems, plain_stems, singular, split_ident, stem, text_stems, tokenize,
};

mod booleans;
mod countries;
mod genders;
mod listed;
mod names;
mod values;

pub(crate) use countries::names_country;
use names::names;
use values::{proper_nouns, values_exact, values_partial};

pub(crate) use nl2sql_state::TypeClass;

/// One known value of a text column.
#[derive(Debug, Clone)]
pub(crate) struct Sample {
    /// The value as the statistics hold it.
    pub(crate) value: Value,
    /// Its lower-case words, as the tokeniser splits them.
    pub(crate) words: Vec<String>,
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
}

impl ColumnInfo {
    /// True for numeric columns that are not keys.
    pub(crate) fn is_measure(&self) -> bool {
        self.class == TypeClass::Numeric && !self.is_key
    }

    /// True for date and timestamp columns.
    pub(crate) fn is_temporal(&self) -> bool {
        matches!(self.class, TypeClass::Date | TypeClass::DateTime)
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

/// Everything the planner needs to know about one snapshot, precomputed.
#[derive(Debug, Clone, Default)]
pub(crate) struct SchemaIndex {
    /// Tables sorted by key.
    pub(crate) tables: Vec<TableInfo>,
    /// All columns.
    pub(crate) columns: Vec<ColumnInfo>,
    /// Foreign keys, in a stable order.
    pub(crate) foreign_keys: Vec<ForeignKey>,
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
                let mut samples: Vec<Sample> = match stats {
                    Some(stats) if class == TypeClass::Text => stats
                        .sample_values
                        .iter()
                        .filter_map(|v| {
                            let text = v.as_str()?;
                            let words: Vec<String> =
                                tokenize(text).into_iter().map(|t| t.lower).collect();
                            (!words.is_empty()).then(|| Sample {
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
                    for v in listed::listed_values(d) {
                        if !samples.iter().any(|s| s.value.as_str() == Some(v.as_str())) {
                            let words = tokenize(&v).into_iter().map(|t| t.lower).collect();
                            samples.push(Sample {
                                value: Value::String(v),
                                words,
                            });
                        }
                    }
                }
                info.columns.push(index.columns.len());
                index.columns.push(ColumnInfo {
                    name: column.name.clone(),
                    table: t,
                    data_type: column.data_type.clone(),
                    class,
                    is_pk: column.is_primary_key,
                    is_key: column.is_primary_key || lower == "id" || lower.ends_with("_id"),
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
                                .is_ok_and(|d| d <= st.sample_values.len())
                    }),
                    samples,
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
                if let Some(to) = to
                    && !fk.constrained_columns.is_empty()
                    && fk.constrained_columns.len() == fk.referred_columns.len()
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
        index
    }

    fn table_by_key(&self, key: &str, snapshot: &SchemaSnapshot) -> Option<usize> {
        snapshot.contract.tables.keys().position(|k| k == key)
    }

    /// The column that names a row of `table`: `name`, `title`, `label`, `…_name`, then the
    /// first non-key text column, then the primary key.
    pub(crate) fn label_column(&self, table: usize) -> Option<usize> {
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
        named("name")
            .or_else(|| named("title"))
            .or_else(|| named("label"))
            .or_else(own_name)
            .or_else(|| {
                cols.iter()
                    .find(|c| text(c) && self.columns[**c].name.to_lowercase().ends_with("name"))
                    .copied()
            })
            .or_else(|| cols.iter().find(|c| self.columns[**c].is_pk).copied())
            .or_else(|| cols.iter().find(text).copied())
            .or_else(|| cols.first().copied())
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
                text(*c)
                    && words.last().is_some_and(|w| {
                        ["or", "er", "ist", "ian"].iter().any(|e| w.ends_with(e)) && w.len() > 4
                    })
            })
        })
    }

    /// True when `from` refers to `to` by a foreign key, directly or through one table in
    /// between (`defects` → `production_runs` → `products`).
    pub(crate) fn refers_to(&self, from: usize, to: usize) -> bool {
        let direct =
            |a: usize, b: usize| self.foreign_keys.iter().any(|f| f.from == a && f.to == b);
        direct(from, to)
            || self
                .foreign_keys
                .iter()
                .any(|f| f.from == from && f.to != from && direct(f.to, to))
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
        .filter(|t| t.kind == super::text::TokenKind::Word)
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
        .filter(|t| t.kind == super::text::TokenKind::Word)
        .map(|t| t.stem)
        .collect();
    (1..=3).contains(&words.len()).then_some(words)
}

/// What a mention links to.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Target {
    /// A table.
    Table(usize),
    /// A column.
    Column(usize),
    /// Known values of a column: `exact` when the question spells whole values.
    Value {
        /// The column.
        column: usize,
        /// The values.
        values: Vec<Value>,
        /// Whole values (`=`/`IN`) or a word inside them (`LIKE`).
        exact: bool,
        /// The word matched when not exact.
        word: String,
    },
}

/// A question span linked to the schema.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Mention {
    /// First token.
    pub(crate) start: usize,
    /// One past the last token.
    pub(crate) end: usize,
    /// The chosen target.
    pub(crate) target: Target,
    /// The score of the choice.
    pub(crate) score: u32,
    /// Equally (or, for words inside longer names, nearly equally) scored targets before
    /// ties were resolved, with their scores (empty when there was no tie).
    pub(crate) alternatives: Vec<(Target, u32)>,
    /// A second reading that nothing but the order of names told apart from the chosen
    /// one (no context, score, type or role preferred either): the question reads two
    /// ways, and the plan would be a guess.
    pub(crate) guess: Option<Target>,
}

impl Target {
    /// One known value of `column`, spelt out whole (`= value`).
    pub(crate) fn known(column: usize, value: Value) -> Target {
        Target::Value {
            column,
            values: vec![value],
            exact: true,
            word: String::new(),
        }
    }
}

impl Mention {
    /// The column of a column or value mention.
    pub(crate) fn column(&self) -> Option<usize> {
        match &self.target {
            Target::Column(c) | Target::Value { column: c, .. } => Some(*c),
            Target::Table(_) => None,
        }
    }
}

/// Links question tokens to the schema. `used[i]` marks tokens consumed by intent cues;
/// they are not linked (values still may be, since they are literal text).
pub(crate) fn link(
    text: &str,
    tokens: &[Token],
    used: &[bool],
    index: &SchemaIndex,
) -> Vec<Mention> {
    let mut taken: Vec<bool> = vec![false; tokens.len()];
    // Capitalised names first: "Northwind Automotive Inc." is a customer, not the
    // industry value "Automotive" inside it.
    let mut mentions = proper_nouns(text, tokens, used, index, &mut taken);
    mentions.extend(values_exact(tokens, used, index, &mut taken));
    mentions.extend(values::phrasal_values(tokens, used, index, &mut taken));
    mentions.extend(booleans::booleans(tokens, used, index, &mut taken));
    mentions.extend(countries::countries(tokens, used, index, &mut taken));
    mentions.extend(genders::genders(tokens, used, index, &mut taken));
    mentions.extend(names(tokens, used, index, &mut taken));
    mentions.extend(values_partial(tokens, used, index, &mut taken));
    mentions.extend(values::place_names(text, tokens, used, index, &mut taken));
    let named = values::named_values(text, tokens, used, index, &mut taken, &mentions);
    mentions.extend(named);
    let literal = values::literal_values(text, tokens, used, index, &mut taken, &mentions);
    mentions.extend(literal);
    let prefer = match tokens.first().map(|t| t.lower.as_str()) {
        Some("who" | "where") => Some(TypeClass::Text),
        Some("when") => Some(TypeClass::Time),
        _ => None,
    };
    mentions.sort_by_key(|m| m.start);
    resolve_ties(&mut mentions, tokens, index, prefer);
    let mentions = complete_names(mentions, tokens, index);
    merge_qualified(mentions, tokens, index)
}

/// "the quantity of incoming material rejected": a column name (`quantity`) whose words
/// are all in a longer column name (`quantity_rejected`) whose other words follow within
/// a few words is that longer column; mentions made only of those other words go.
fn complete_names(mentions: Vec<Mention>, tokens: &[Token], index: &SchemaIndex) -> Vec<Mention> {
    let mut absorbed: Vec<(usize, usize)> = Vec::new();
    let mut out = mentions;
    for m in &mut out {
        let Target::Column(c) = m.target else {
            continue;
        };
        let own = &index.columns[c].plain;
        if own.is_empty() {
            continue;
        }
        let (start, end) = (m.end, (m.end + 5).min(tokens.len()));
        let longer = index.columns.iter().enumerate().find_map(|(c2, col)| {
            if c2 == c || !col.is_measure() || col.plain.len() <= own.len() {
                return None;
            }
            if !own.iter().all(|w| col.plain.contains(w)) {
                return None;
            }
            let extra: Vec<&String> = col.plain.iter().filter(|w| !own.contains(w)).collect();
            let at: Vec<usize> = extra
                .iter()
                .map(|w| {
                    (start..end).find(|i| tokens[*i].stem == **w || stem(&tokens[*i].lower) == **w)
                })
                .collect::<Option<Vec<usize>>>()?;
            Some((c2, at))
        });
        if let Some((c2, at)) = longer
            && index.columns[c].is_measure()
        {
            m.target = Target::Column(c2);
            m.alternatives.clear();
            for i in at {
                absorbed.push((i, i + 1));
            }
        }
    }
    out.retain(|m| !absorbed.iter().any(|(a, b)| *a <= m.start && m.end <= *b));
    out
}

/// Nouns that stand for "how much" after a measure's name.
const HEAD_NOUNS: &[&str] = &["quantity", "level", "figure", "amount", "total", "sum"];

/// `machine name`, `maintenance downtime`: a table word right before one of its columns
/// qualifies the column; a word that only partly names a table right before another
/// table's column modifies that column (`production lines`).
fn merge_qualified(mentions: Vec<Mention>, tokens: &[Token], index: &SchemaIndex) -> Vec<Mention> {
    let mut out: Vec<Mention> = Vec::new();
    for m in mentions {
        // "on-hand quantity": a generic measure noun after a measure's own name is that
        // measure, not another column that happens to hold the word.
        if let Some(prev) = out.last_mut()
            && prev.end == m.start
            && m.end == m.start + 1
            && prev.score >= 20
            && m.score <= 8
            && matches!(prev.target, Target::Column(p) if index.columns[p].is_measure())
            && matches!(m.target, Target::Column(_))
            && HEAD_NOUNS.contains(&tokens[m.start].stem.as_str())
        {
            prev.end = m.end;
            continue;
        }
        if let (Some(prev), Target::Column(c)) = (out.last(), &m.target)
            && prev.end == m.start
            && let Target::Table(t) = prev.target
        {
            let col_table = &index.tables[index.columns[*c].table];
            // A plural table word before a word is a subject and its verb
            // ("factories opened"), not a qualified column.
            let plural = tokens[prev.start..prev.end]
                .last()
                .is_some_and(|w| w.lower.ends_with('s') && w.lower != w.stem);
            let shares_words = tokens[prev.start..prev.end]
                .iter()
                .all(|w| col_table.stems.contains(&w.stem));
            let qualifies = index.columns[*c].table == t || prev.score <= 8 || shares_words;
            let verb = m.score <= 8
                && tokens[m.start..m.end]
                    .last()
                    .is_some_and(|w| w.lower.ends_with("ed"));
            if plural || verb || !qualifies {
                out.push(m);
                continue;
            }
            let start = prev.start;
            out.pop();
            out.push(Mention { start, ..m });
            continue;
        }
        out.push(m);
    }
    out
}

/// The score of a table found by one word of its name: the best a partial match gets.
const PARTIAL_SCORE: u32 = 8;

/// Candidates of one span before context is known.
pub(super) type Candidates = Vec<(Target, u32)>;

/// A mention with its best-scored candidates; ties are resolved by `resolve_ties`.
pub(super) fn pending(start: usize, end: usize, mut cands: Candidates) -> Mention {
    let best = cands.iter().map(|(_, s)| *s).max().unwrap_or(0);
    // A word found inside longer names ("kind" in `machine_types` and in
    // `maintenance_type`) is weak evidence for any of them: the context decides between
    // candidates one point apart.
    let floor = if best <= PARTIAL_SCORE {
        best.saturating_sub(1)
    } else {
        best
    };
    cands.retain(|(_, s)| *s >= floor);
    cands.sort_by_key(|(_, s)| std::cmp::Reverse(*s));
    let alternatives: Candidates = cands;
    Mention {
        start,
        end,
        target: alternatives
            .first()
            .map(|(t, _)| t.clone())
            .unwrap_or(Target::Table(0)),
        score: best,
        alternatives: if alternatives.len() > 1 {
            alternatives
        } else {
            Vec::new()
        },
        guess: None,
    }
}

fn table_of(target: &Target, index: &SchemaIndex) -> usize {
    match target {
        Target::Table(t) => *t,
        Target::Column(c) | Target::Value { column: c, .. } => index.columns[*c].table,
    }
}

/// Picks one target per ambiguous mention: prefer a target whose table is mentioned
/// unambiguously elsewhere, then one adjacent by foreign key to such a table, then a
/// table's label column, then the smallest table and column name.
fn resolve_ties(
    mentions: &mut [Mention],
    tokens: &[Token],
    index: &SchemaIndex,
    prefer: Option<TypeClass>,
) {
    let alternatives = |m: &Mention| -> Option<Vec<(Target, u32)>> {
        (!m.alternatives.is_empty()).then(|| m.alternatives.clone())
    };
    let mut context: Vec<usize> = mentions
        .iter()
        .filter(|m| alternatives(m).is_none())
        .map(|m| table_of(&m.target, index))
        .collect();
    let neighbours_of = |context: &[usize]| -> Vec<usize> {
        index
            .foreign_keys
            .iter()
            .flat_map(|fk| {
                let mut v = Vec::new();
                if context.contains(&fk.from) {
                    v.push(fk.to);
                }
                if context.contains(&fk.to) {
                    v.push(fk.from);
                }
                v
            })
            .collect()
    };
    // Tables named right beside each span ("the factory name", "the name of the ships"),
    // and columns other mentions name a value of ("performed … by Frank").
    let tables_at: Vec<(usize, usize, usize, Option<usize>)> = mentions
        .iter()
        .filter(|m| m.alternatives.is_empty())
        .filter_map(|m| match m.target {
            Target::Table(t) => Some((m.start, m.end, t, None)),
            Target::Column(c) => Some((m.start, m.end, index.columns[c].table, Some(c))),
            Target::Value { .. } => None,
        })
        .collect();
    let valued: Vec<usize> = mentions
        .iter()
        .filter(|m| m.alternatives.is_empty())
        .filter_map(|m| match m.target {
            Target::Value { column, .. } => Some(column),
            _ => None,
        })
        .collect();
    // In question order; each choice joins the context of the next.
    for m in mentions.iter_mut() {
        let Some(alts) = alternatives(m) else {
            continue;
        };
        let neighbours = neighbours_of(&context);
        let (start, end) = (m.start, m.end);
        // How many words from the nearest mention of the candidate's table (the very column
        // named by the word before or after counts as nearer still: "energy used" is the
        // energy column); 4 and more: not near.
        let distance = |target: &Target, table: usize| {
            tables_at
                .iter()
                .filter(|&&(_, _, t, _)| t == table)
                .map(|&(s, e, _, c)| {
                    // Words between the two spans (0 when they touch or overlap).
                    let gap = start.saturating_sub(e).max(s.saturating_sub(end));
                    let same_column = matches!(target, Target::Column(own) if c == Some(*own));
                    2 * gap + usize::from(!same_column)
                })
                .min()
                .unwrap_or(usize::MAX)
                .min(8)
        };
        // "the name of its factory": the table named after "of" (and a determiner).
        let of_table = {
            let mut k = end;
            if tokens.get(k).is_some_and(|t| t.is("of")) {
                k += 1;
                if tokens.get(k).is_some_and(|t| {
                    t.is_any(&[
                        "the", "its", "their", "his", "her", "a", "an", "each", "every",
                    ])
                }) {
                    k += 1;
                }
                tables_at
                    .iter()
                    .find(|&&(s, _, _, _)| s == k)
                    .map(|&(_, _, t, _)| t)
            } else {
                None
            }
        };
        let key = |(t, score): &(Target, u32)| {
            let table = table_of(t, index);
            let near = (of_table != Some(table), distance(t, table));
            let has_value = matches!(t, Target::Column(c) if valued.contains(c));
            let in_context = context.contains(&table);
            let adjacent = neighbours.contains(&table);
            let label = matches!(t, Target::Value { column, .. } | Target::Column(column) if index.label_column(table) == Some(*column));
            let is_table = matches!(t, Target::Table(_));
            let col_name = match t {
                Target::Column(c) | Target::Value { column: c, .. } => {
                    index.columns[*c].name.clone()
                }
                Target::Table(_) => String::new(),
            };
            let preferred = match (t, prefer) {
                (Target::Column(c) | Target::Value { column: c, .. }, Some(p)) => {
                    let class = index.columns[*c].class;
                    class == p || (p == TypeClass::Time && index.columns[*c].is_temporal())
                }
                _ => false,
            };
            (
                (near, !has_value),
                !in_context,
                !adjacent,
                std::cmp::Reverse(*score),
                !preferred,
                !is_table,
                !label,
                index.tables[table].name.clone(),
                col_name,
            )
        };
        let mut ranked: Vec<_> = alts.iter().map(|t| (key(t), t)).collect();
        ranked.sort_by(|a, b| a.0.cmp(&b.0));
        if let Some((first, (best, score))) = ranked.first() {
            // Decided only by the names' order (the last two parts of the key).
            m.guess = ranked.get(1).and_then(|(second, (other, _))| {
                let same = (
                    first.0, first.1, first.2, first.3, first.4, first.5, first.6,
                ) == (
                    second.0, second.1, second.2, second.3, second.4, second.5, second.6,
                );
                (same && other != best).then(|| other.clone())
            });
            m.target = best.clone();
            m.score = *score;
            context.push(table_of(best, index));
        }
    }
}

/// The lower-case words of a datasource id, so a question naming the datasource does not
/// report them as unlinked.
pub(crate) fn datasource_words(id: &str) -> Vec<String> {
    split_ident(id)
}
