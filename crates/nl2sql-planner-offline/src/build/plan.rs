//! An [`Analysis`] as a `PlanModel`, in named steps: the join layout (which tables, in
//! which order, under which aliases, joined how), then each clause from the analysis
//! through one expression builder (columns by alias, grouped dates, measures, filters).

use std::collections::BTreeSet;

use nl2sql_plan::{
    CaseWhen, CastType, Direction, Expr, ExprKind, GroupByItem, JoinSpec, JoinType, LiteralValue,
    Op, OrderItem, PlanModel, SelectItem, TableRef,
};

use super::terms::{BuildError, aliases, and, literal, negate, number_literal, op_of};
use crate::analyze::{Analysis, Bound, Filter, Grain, Lit, Measure, Output, Test};
use crate::intent::Agg;
use crate::joins::{JoinStep, join_tree};
use crate::link::{ColumnInfo, Part, SchemaIndex};

/// Builds the `PlanModel` of `a`, with the select aliases `names`.
pub(crate) fn plan_model(
    a: &Analysis,
    index: &SchemaIndex,
    names: &[String],
) -> Result<PlanModel, BuildError> {
    let layout = Layout::of(a, index)?;
    let exprs = Exprs::new(a, index, &layout);
    // Rows missing through another table, counted or grouped: the left joins would count
    // the rows in between (each game of a stadium), and no plan here counts per row of
    // the FROM table first. Refused, not a number that looks right.
    if let Some(t) = absent_far(a, &layout)
        .into_iter()
        .find(|t| !exprs.counted_absent.contains(t))
    {
        return Err(BuildError::Ambiguous(format!(
            "the rows of {} without any {} are reached through another table, which a count \
             or grouping of them would count once per row in between; ask for the list of \
             them instead",
            index.tables[a.base].name, index.tables[t].name
        )));
    }
    Ok(PlanModel {
        distinct: a.distinct,
        tables: layout.table_refs(index),
        joins: layout.joins(a, index),
        select_items: exprs.select_items(names),
        where_: exprs.where_clause(),
        group_by: exprs.group_by(),
        having: exprs.having(),
        order_by: exprs.order_by(names),
        limit: a.limit,
        reasoning: Some(layout.reasoning(a, index)),
        ..PlanModel::default()
    })
}

/// The tables of the plan in join order, with their aliases and the join steps.
struct Layout {
    /// Table indexes; the first is the FROM table.
    order: Vec<usize>,
    aliases: Vec<String>,
    steps: Vec<JoinStep>,
    /// Tables the question needs rows of (inner joins); the others are joined only to
    /// find rows without a match (left joins).
    inner: BTreeSet<usize>,
}

/// The foreign key that joins the two tables of key `fk`: `fk` itself when it is the only
/// one between them; else the one whose referencing column the question names ("students
/// who have treasurer votes" joins by `Treasurer_Vote`, not the first of the vote columns
/// that refer to students); else the one whose role the question says (`link/roles.rs`:
/// "trips that started from the station"). Two or more keys, none named and no role said,
/// is refused, naming them: any choice would be a guess.
fn named_key(a: &Analysis, index: &SchemaIndex, fk: usize) -> Result<usize, BuildError> {
    let key = &index.foreign_keys[fk];
    let parallel = index.parallel_keys(fk);
    if parallel.len() < 2 {
        return Ok(fk);
    }
    let names = |i: usize| {
        let f = &index.foreign_keys[i];
        a.mentions
            .iter()
            .any(|m| m.column().is_some_and(|c| f.leads_from(&index.columns[c])))
    };
    let named: Vec<usize> = parallel.iter().copied().filter(|i| names(*i)).collect();
    // Else the key whose role the question says ("trips that started from the station").
    let role = a
        .roles
        .iter()
        .find(|(k, _)| parallel.contains(k))
        .map(|(k, _)| k);
    match (named.as_slice(), role) {
        ([one], _) | ([], Some(one)) => Ok(*one),
        _ => Err(BuildError::Ambiguous(format!(
            "{} and {} are joined by {} different keys ({}); name the one you mean",
            index.tables[key.from].name,
            index.tables[key.to].name,
            parallel.len(),
            parallel
                .iter()
                .map(|i| {
                    let f = &index.foreign_keys[*i];
                    format!(
                        "{}.{}",
                        index.tables[f.from].name,
                        f.from_columns.join(", ")
                    )
                })
                .collect::<Vec<_>>()
                .join(" or ")
        ))),
    }
}

impl Layout {
    /// Every table the analysis reads, joined along foreign keys from its base table.
    fn of(a: &Analysis, index: &SchemaIndex) -> Result<Layout, BuildError> {
        let required = required_tables(a, index);
        let inner: BTreeSet<usize> = match join_tree(index, a.base, &required) {
            Ok(steps) => steps.iter().map(|s| s.table).collect(),
            Err(_) => BTreeSet::new(),
        };
        // Left-joined too: tables whose rows must be missing, and those of conditions
        // counted per answer.
        let counted = a
            .per_answer
            .iter()
            .flat_map(|(g, _)| g)
            .map(|k| index.columns[a.filters[*k].column].table);
        let with_absent: BTreeSet<usize> = required
            .iter()
            .chain(&a.absent)
            .copied()
            .chain(counted)
            .collect();
        let mut steps = join_tree(index, a.base, &with_absent).map_err(|missing| {
            BuildError::Failed(format!(
                "no foreign-key path joins {} to {}",
                index.tables[a.base].name,
                missing
                    .iter()
                    .map(|t| index.tables[*t].name.clone())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })?;
        for step in &mut steps {
            step.fk = named_key(a, index, step.fk)?;
        }
        let order: Vec<usize> = std::iter::once(a.base)
            .chain(steps.iter().map(|s| s.table))
            .collect();
        Ok(Layout {
            aliases: aliases(index, &order),
            order,
            steps,
            inner,
        })
    }

    fn alias_of(&self, table: usize) -> String {
        self.order
            .iter()
            .position(|x| *x == table)
            .map(|i| self.aliases[i].clone())
            .unwrap_or_default()
    }

    fn table_refs(&self, index: &SchemaIndex) -> Vec<TableRef> {
        self.order
            .iter()
            .enumerate()
            .map(|(i, t)| TableRef {
                name: index.tables[*t].name.clone(),
                schema_name: None,
                database: None,
                alias: self.aliases[i].clone(),
                ordinal: ordinal(i),
            })
            .collect()
    }

    /// One join per step: the foreign key's column equalities, inner unless the table is
    /// joined only to find absent rows.
    fn joins(&self, a: &Analysis, index: &SchemaIndex) -> Vec<JoinSpec> {
        self.steps
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let fk = &index.foreign_keys[s.fk];
                let (parent_cols, child_cols) = if fk.from == s.parent {
                    (&fk.from_columns, &fk.to_columns)
                } else {
                    (&fk.to_columns, &fk.from_columns)
                };
                let (pa, ca) = (self.alias_of(s.parent), self.alias_of(s.table));
                let eqs = parent_cols
                    .iter()
                    .zip(child_cols)
                    .map(|(p, c)| {
                        Expr::binary(
                            Op::Eq,
                            Expr::column(Some(&pa), p),
                            Expr::column(Some(&ca), c),
                        )
                    })
                    .collect();
                JoinSpec {
                    left_alias: pa.clone(),
                    right_alias: ca,
                    join_type: if !a.left_joins() || self.inner.contains(&s.table) {
                        JoinType::Inner
                    } else {
                        JoinType::Left
                    },
                    condition: and(eqs).unwrap_or_else(Expr::null),
                    ordinal: ordinal(i),
                }
            })
            .collect()
    }

    /// Whether a join repeats the rows of a table already joined: a table that refers to
    /// its parent (a count of the FROM table's rows must then count its key once).
    fn fans_out(&self, a: &Analysis, index: &SchemaIndex) -> bool {
        self.steps.iter().any(|s| {
            let fk = &index.foreign_keys[s.fk];
            fk.from == s.table
                && fk.to == s.parent
                && fk.from != fk.to
                && (!a.left_joins() || self.inner.contains(&s.table))
        })
    }

    fn reasoning(&self, a: &Analysis, index: &SchemaIndex) -> String {
        let mut reasoning = vec![format!(
            "tables: {}",
            self.order
                .iter()
                .map(|t| index.tables[*t].name.clone())
                .collect::<Vec<_>>()
                .join(" -> ")
        )];
        reasoning.extend(a.notes.iter().cloned());
        reasoning.join("; ")
    }
}

/// The tables the analysis's outputs, measures, filters, groups and joins read.
fn required_tables(a: &Analysis, index: &SchemaIndex) -> BTreeSet<usize> {
    let mut required: BTreeSet<usize> = BTreeSet::new();
    for o in &a.outputs {
        if let Output::Column(c) = o {
            required.insert(index.columns[*c].table);
        }
    }
    required.extend(a.measures.iter().map(|m| m.table));
    required.extend(
        a.filters
            .iter()
            .enumerate()
            .filter(|(k, _)| !a.counted_per_answer(*k))
            .map(|(_, f)| index.columns[f.column].table),
    );
    required.extend(a.group_by.iter().map(|c| index.columns[*c].table));
    // A table whose rows must be missing is never also one whose rows must be there (a
    // verb of the negated phrase names it too: "has no students minored in").
    required.extend(a.joined.iter().copied().filter(|t| !a.absent.contains(t)));
    required
}

/// Absent tables reached through another table ("stadiums where no accidents happened":
/// stadium → game → accident): a `NULL` key there only says that one game had no
/// accident, and the stadium would be listed once per such game even when another game
/// had one. In a plain listing (no measure, grouping or per-answer condition) each row of
/// the FROM table is grouped instead, and kept when it counts none of their rows.
fn absent_counted(a: &Analysis, layout: &Layout, base_key: Option<usize>) -> Vec<usize> {
    if base_key.is_none()
        || !a.measures.is_empty()
        || !a.group_by.is_empty()
        || !a.having.is_empty()
        || !a.per_answer.is_empty()
        || !a.both.is_empty()
    {
        return Vec::new();
    }
    absent_far(a, layout)
}

/// Absent tables joined to another table than the FROM table.
fn absent_far(a: &Analysis, layout: &Layout) -> Vec<usize> {
    a.absent
        .iter()
        .copied()
        .filter(|t| {
            layout
                .steps
                .iter()
                .find(|s| s.table == *t)
                .is_some_and(|s| s.parent != a.base)
        })
        .collect()
}

fn ordinal(i: usize) -> i64 {
    i64::try_from(i).unwrap_or_default()
}

/// The expressions of one plan: columns under the layout's aliases.
struct Exprs<'a> {
    a: &'a Analysis,
    index: &'a SchemaIndex,
    layout: &'a Layout,
    fans_out: bool,
    /// The FROM table's key, when it has exactly one key column.
    base_key: Option<usize>,
    /// Absent tables counted per row of the FROM table ([`absent_counted`]).
    counted_absent: Vec<usize>,
}

impl<'a> Exprs<'a> {
    fn new(a: &'a Analysis, index: &'a SchemaIndex, layout: &'a Layout) -> Self {
        let base_key = index.single_key(a.base);
        Exprs {
            a,
            index,
            layout,
            fans_out: layout.fans_out(a, index),
            base_key,
            counted_absent: absent_counted(a, layout, base_key),
        }
    }

    fn col(&self, c: usize) -> Expr {
        let info = &self.index.columns[c];
        Expr::column(Some(&self.layout.alias_of(info.table)), &info.name)
    }

    /// Column `c` read as a number: cast when its numbers are kept as text, so that they
    /// add up, compare and sort as numbers ("9" < "55"), in every dialect.
    fn number(&self, c: usize) -> Expr {
        as_number(self.col(c), &self.index.columns[c])
    }

    /// A column, or a grouped date column by its calendar period.
    fn grouped(&self, c: usize) -> Expr {
        match self
            .a
            .grains
            .iter()
            .find(|(g, _)| *g == c)
            .map(|(_, grain)| grain)
        {
            Some(Grain::Year) => Expr::func("YEAR", vec![self.col(c)]),
            Some(Grain::Month) => Expr::func(
                "DATE_TRUNC",
                vec![
                    Expr::literal(LiteralValue::Str("month".into())),
                    self.col(c),
                ],
            ),
            None => self.col(c),
        }
    }

    fn measure(&self, m: &Measure) -> Expr {
        // "How many machines produced Widget Alpha" counts machines, not their runs.
        if self.fans_out
            && m.agg == Agg::Count
            && m.column.is_none()
            && m.table == self.a.base
            && let Some(key) = self.base_key
        {
            return Expr::distinct_aggregate("COUNT", self.col(key));
        }
        let arg = |c: usize| match (m.times, m.minus) {
            (Some(t), _) => Expr::binary(Op::Multiply, self.number(t), self.number(c)),
            (None, Some(t)) => Expr::binary(Op::Minus, self.number(c), self.number(t)),
            (None, None) => self.number(c),
        };
        if let (true, Some(c)) = (m.distinct, m.column) {
            // Distinct values are the stored ones ("5" and "5.0" are two).
            let arg = if m.agg == Agg::Count {
                self.col(c)
            } else {
                arg(c)
            };
            return Expr::distinct_aggregate(agg_name(m.agg), arg);
        }
        let (name, arg) = match (m.agg, m.column) {
            (Agg::Count, _) | (_, None) => ("COUNT", Expr::column(None, "*")),
            (agg, Some(c)) => (agg_name(agg), arg(c)),
        };
        let mut e = Expr::func(name, vec![arg]);
        e.is_aggregate = true;
        e
    }

    fn filter(&self, f: &Filter) -> Expr {
        let c = self.col(f.column);
        let negated = |e: Expr| {
            if f.negated {
                Expr::unary(Op::Not, e)
            } else {
                e
            }
        };
        match &f.test {
            Test::Cmp(op, lit) => {
                let op = if f.negated { negate(*op) } else { *op };
                let (c, value) = match lit {
                    Lit::Number(x) => (self.number(f.column), number_literal(*x)),
                    Lit::Date(d) => (c, LiteralValue::Str(d.clone())),
                };
                Expr::binary(op_of(op), c, Expr::literal(value))
            }
            Test::In(values) if values.len() == 1 => Expr::binary(
                if f.negated { Op::NotEq } else { Op::Eq },
                c,
                Expr::literal(literal(&values[0])),
            ),
            Test::In(values) => negated(Expr::binary(
                Op::In,
                c,
                Expr::func(
                    "LIST",
                    values.iter().map(|v| Expr::literal(literal(v))).collect(),
                ),
            )),
            Test::Contains(word, part) => {
                let pattern = match part {
                    Part::Inside => format!("%{word}%"),
                    Part::Start => format!("{word}%"),
                    Part::End => format!("%{word}"),
                };
                negated(Expr::binary(
                    Op::Like,
                    c,
                    Expr::literal(LiteralValue::Str(pattern)),
                ))
            }
            Test::VsComputed(op, agg, within) => {
                let op = if f.negated { negate(*op) } else { *op };
                let inner = self.computed(f.column, *agg, within);
                Expr::binary(op_of(op), self.number(f.column), Expr::subquery(inner))
            }
        }
    }

    /// `SELECT AGG(a.c) FROM t AS a [WHERE …]`: column `c` aggregated over the rows of its
    /// table where the conditions hold (a scope of its own: the alias `a` names only the
    /// sub-query's table).
    fn computed(&self, c: usize, agg: Agg, within: &[Filter]) -> PlanModel {
        let info = &self.index.columns[c];
        let alias = "a".to_owned();
        let mut value = Expr::func(
            agg_name(agg),
            vec![as_number(Expr::column(Some(&alias), &info.name), info)],
        );
        value.is_aggregate = true;
        // The conditions as the outer plan would write them, on the sub-query's alias.
        let conditions = within.iter().map(|w| {
            let mut e = self.filter(w);
            e.walk_mut(&mut |x| {
                if x.kind == ExprKind::Column {
                    x.alias = Some(alias.clone());
                }
            });
            e
        });
        PlanModel {
            tables: vec![TableRef {
                name: self.index.tables[info.table].name.clone(),
                schema_name: None,
                database: None,
                alias: alias.clone(),
                ordinal: 0,
            }],
            select_items: vec![SelectItem {
                expr: value,
                alias: None,
                ordinal: 0,
            }],
            where_: and(conditions.collect()),
            ..PlanModel::default()
        }
    }

    fn select_items(&self, names: &[String]) -> Vec<SelectItem> {
        self.a
            .outputs
            .iter()
            .enumerate()
            .map(|(i, o)| SelectItem {
                expr: match o {
                    Output::Column(c) => self.grouped(*c),
                    Output::Measure(m) => self.measure(&self.a.measures[*m]),
                },
                alias: names.get(i).cloned(),
                ordinal: ordinal(i),
            })
            .collect()
    }

    /// The filters, and for each table whose absent rows are asked for, its key `IS NULL`
    /// (a table without a key, e.g. a link table: the column it is joined by, never `NULL`
    /// on a matched row).
    fn where_clause(&self) -> Option<Expr> {
        let counted = &self.counted_absent;
        let absent = self
            .a
            .absent
            .iter()
            .filter(|t| !counted.contains(t))
            .filter_map(|t| Some(Expr::binary(Op::Is, self.absent_key(*t)?, Expr::null())));
        // Each group of alternatives is one `OR`, where its first filter stands.
        let filters = self
            .a
            .filters
            .iter()
            .enumerate()
            .filter(|(k, _)| !self.a.counted_per_answer(*k))
            .filter_map(|(k, f)| match self.a.or_group(k) {
                None => Some(self.filter(f)),
                Some(g) if g[0] == k => g
                    .iter()
                    .map(|j| self.filter(&self.a.filters[*j]))
                    .reduce(|l, r| Expr::binary(Op::Or, l, r)),
                Some(_) => None,
            });
        and(filters.chain(absent).collect())
    }

    /// The group filters; for each condition of an intersection, that it held on some
    /// row of the group; for each condition counted per answer, that it held on some row
    /// or on none: `SUM(CASE WHEN <condition> THEN 1 ELSE 0 END) > 0` (or `= 0`).
    /// The column of absent table `t` that is `NULL` exactly on the rows a left join
    /// adds: its key, or (a table without a key, e.g. a link table) the column it is
    /// joined by.
    fn absent_key(&self, t: usize) -> Option<Expr> {
        let pk = self.index.tables[t]
            .columns
            .iter()
            .copied()
            .find(|c| self.index.columns[*c].is_pk);
        Some(match pk {
            Some(pk) => self.col(pk),
            None => {
                let step = self.layout.steps.iter().find(|s| s.table == t)?;
                let fk = &self.index.foreign_keys[step.fk];
                let columns = if fk.from == t {
                    &fk.from_columns
                } else {
                    &fk.to_columns
                };
                Expr::column(Some(&self.layout.alias_of(t)), columns.first()?)
            }
        })
    }

    fn having(&self) -> Option<Expr> {
        // Absent rows counted per row of the FROM table: none.
        let none = self.counted_absent.iter().filter_map(|&t| {
            let mut count = Expr::func("COUNT", vec![self.absent_key(t)?]);
            count.is_aggregate = true;
            Some(Expr::binary(
                Op::Eq,
                count,
                Expr::literal(LiteralValue::Int(0)),
            ))
        });
        let each = self
            .a
            .both
            .iter()
            .flat_map(|b| &b.filters)
            .map(|k| (vec![*k], true));
        let counted = self.a.per_answer.iter().cloned();
        let each = each.chain(counted).filter_map(|(group, some)| {
            let condition = and(group
                .iter()
                .map(|k| self.filter(&self.a.filters[*k]))
                .collect())?;
            let held = Expr::case(
                vec![CaseWhen {
                    condition,
                    result: Expr::literal(LiteralValue::Int(1)),
                    ordinal: 0,
                }],
                Some(Expr::literal(LiteralValue::Int(0))),
            );
            Some(Expr::binary(
                if some { Op::Gt } else { Op::Eq },
                Expr::func("SUM", vec![held]),
                Expr::literal(LiteralValue::Int(0)),
            ))
        });
        and(self
            .a
            .having
            .iter()
            .map(|h| {
                let measure = &self.a.measures[h.measure];
                let bound = match &h.value {
                    Bound::Number(v) => Expr::literal(number_literal(*v)),
                    // "whose average price is higher than the average price of all
                    // products": a column aggregated over its table's rows.
                    Bound::Computed(c, agg, within) => {
                        Expr::subquery(self.computed(*c, *agg, within))
                    }
                };
                Expr::binary(op_of(h.op), self.measure(measure), bound)
            })
            .chain(each)
            .chain(none)
            .collect())
    }

    fn group_by(&self) -> Vec<GroupByItem> {
        // With absent rows counted, each row of the FROM table is a group (its key), with
        // the columns listed.
        let per_row: Vec<usize> = match self.base_key {
            Some(key) if !self.counted_absent.is_empty() => std::iter::once(key)
                .chain(self.a.outputs.iter().filter_map(|o| match o {
                    Output::Column(c) if *c != key => Some(*c),
                    _ => None,
                }))
                .collect(),
            _ => Vec::new(),
        };
        self.a
            .group_by
            .iter()
            .chain(&per_row)
            .enumerate()
            .map(|(i, c)| GroupByItem {
                expr: self.grouped(*c),
                ordinal: ordinal(i),
            })
            .collect()
    }

    /// Sort keys; a measure that is an output is sorted by its output name.
    fn order_by(&self, names: &[String]) -> Vec<OrderItem> {
        self.a
            .order
            .iter()
            .enumerate()
            .map(|(i, (o, desc))| {
                let expr = match o {
                    // A column of numbers kept as text sorts as numbers.
                    Output::Column(c) if !self.a.grains.iter().any(|(g, _)| g == c) => {
                        self.number(*c)
                    }
                    Output::Column(c) => self.grouped(*c),
                    Output::Measure(m) => match self.a.outputs.iter().position(|x| x == o) {
                        Some(p) => Expr::column(None, &names[p]),
                        None => self.measure(&self.a.measures[*m]),
                    },
                };
                OrderItem {
                    expr,
                    direction: if *desc {
                        Direction::Desc
                    } else {
                        Direction::Asc
                    },
                    ordinal: ordinal(i),
                }
            })
            .collect()
    }
}

/// `e`, a reference to column `info`, cast to a number when the column keeps numbers as
/// text.
fn as_number(e: Expr, info: &ColumnInfo) -> Expr {
    if info.numbers_as_text {
        Expr::cast(e, CastType::Real)
    } else {
        e
    }
}

fn agg_name(agg: Agg) -> &'static str {
    match agg {
        Agg::Count => "COUNT",
        Agg::Sum => "SUM",
        Agg::Avg => "AVG",
        Agg::Min => "MIN",
        Agg::Max => "MAX",
    }
}
