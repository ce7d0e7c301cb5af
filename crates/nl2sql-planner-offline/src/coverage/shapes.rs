//! Plans whose shape says the question was misread, whatever its words: two lists paired
//! through a table no word names, a MIN or MAX per group no word asked for, conditions no
//! row can meet together, and two tables met only through a parent both refer to that no
//! word names. Each is refused by [`super::cover`], naming the words it came from.

use nl2sql_plan::{InterpretedSpan, PlanModel};

use crate::analyze::Analysis;
use crate::link::SchemaIndex;
use crate::text::Token;

/// Two tables whose columns a plan lists side by side, paired through a third.
pub(super) struct Pairing {
    /// The table of the first output.
    pub(super) first: String,
    /// The table of the first output from another table.
    pub(super) second: String,
    /// The table between them that no word names.
    pub(super) via: String,
    /// The first mention of `second` (an index into the analysis's mentions).
    pub(super) second_mention: usize,
}

/// A list of two tables' columns ("all reviewer names and movie names") that the plan
/// pairs through a third table no word names and no verb relates, with no condition or
/// figure: the question never said which reviewer goes with which movie.
pub(super) fn paired_through_unnamed(
    tokens: &[Token],
    analysis: &Analysis,
    index: &SchemaIndex,
    plan: &PlanModel,
    spans: &[(usize, InterpretedSpan)],
) -> Option<Pairing> {
    if plan.tables.len() < 3
        || plan.where_.is_some()
        || plan.having.is_some()
        || plan.select_items.iter().any(|s| s.expr.is_aggregate_call())
        || spans.iter().any(|(_, s)| s.element.starts_with("the join of"))
        // "the names of players and of their coaches", "the markets they are on", "for
        // each train": a word that refers back pairs them.
        || tokens.iter().any(|t| {
            t.is_any(&["their", "its", "they", "them", "each", "whose", "his", "her", "per"])
        })
    {
        return None;
    }
    let named: Vec<&str> = analysis
        .mentions
        .iter()
        .map(|m| index.tables[m.target.table(index)].name.as_str())
        .collect();
    let unnamed = plan
        .tables
        .iter()
        .find(|t| !named.iter().any(|n| n.eq_ignore_ascii_case(&t.name)))?;
    let mut outputs = plan.select_items.iter().filter_map(|s| {
        let alias = s.expr.alias.as_deref()?;
        plan.tables
            .iter()
            .find(|t| t.alias == alias)
            .map(|t| t.name.clone())
    });
    let first = outputs.next()?;
    let second = outputs.find(|t| *t != first)?;
    let second_mention = analysis
        .mentions
        .iter()
        .position(|m| index.tables[m.target.table(index)].name == second)?;
    Some(Pairing {
        first,
        second,
        via: unnamed.name.clone(),
        second_mention,
    })
}

/// A MIN or MAX the plan takes per group of its other outputs when no word of the
/// question asks for groups ("the phone number of the customer who filed the complaint
/// raised most recently" read as each phone number's latest complaint): the groups are
/// the planner's, and the superlative most likely ranked rows. The span of the cue.
pub(super) fn ungrouped_extreme(analysis: &Analysis, plan: &PlanModel) -> Option<(usize, usize)> {
    use crate::intent::Agg;
    let extreme = plan.select_items.iter().any(|s| {
        s.expr.is_aggregate_call()
            && s.expr
                .func_name
                .as_deref()
                .is_some_and(|f| f.eq_ignore_ascii_case("max") || f.eq_ignore_ascii_case("min"))
    });
    if plan.group_by.is_empty() || !extreme || !analysis.cues.groups.is_empty() {
        return None;
    }
    let cues = &analysis.cues;
    cues.supers
        .iter()
        .map(|s| (s.start, s.end))
        .chain(
            cues.aggs
                .iter()
                .filter(|a| matches!(a.agg, Agg::Min | Agg::Max))
                .map(|a| (a.start, a.end)),
        )
        .min()
}

/// Two conditions of the plan's WHERE, joined by AND, that no row can meet together:
/// "price higher than 10000000 and … price lower than 5000000" (an empty range) or one
/// column equal to two different values. Such a plan answers nothing, whatever the
/// data, so the question meant something else (rows of a group meeting each condition,
/// an intersection). The two conditions, as SQL-like text.
pub(super) fn contradiction(plan: &PlanModel) -> Option<String> {
    use nl2sql_plan::{ExprKind, LiteralValue, Op};
    fn conjuncts<'e>(e: &'e nl2sql_plan::Expr, out: &mut Vec<&'e nl2sql_plan::Expr>) {
        match (e.kind, e.op, &e.left, &e.right) {
            (ExprKind::Binary, Some(Op::And), Some(l), Some(r)) => {
                conjuncts(l, out);
                conjuncts(r, out);
            }
            _ => out.push(e),
        }
    }
    let mut all = Vec::new();
    conjuncts(plan.where_.as_ref()?, &mut all);
    // (column, op, value) of each comparison of a column with a constant.
    let tests: Vec<(String, Op, &LiteralValue)> = all
        .iter()
        .filter_map(|e| {
            let (l, r) = (e.left.as_deref()?, e.right.as_deref()?);
            if l.kind != ExprKind::Column || r.kind != ExprKind::Literal || r.is_null {
                return None;
            }
            let op =
                e.op.filter(|op| matches!(op, Op::Eq | Op::Gt | Op::Lt | Op::GtEq | Op::LtEq))?;
            let column = format!(
                "{}.{}",
                l.alias.as_deref().unwrap_or(""),
                l.column_name.as_deref()?
            );
            Some((column, op, r.value.as_ref()?))
        })
        .collect();
    let number = |v: &LiteralValue| match v {
        LiteralValue::Int(i) => Some(*i as f64),
        LiteralValue::Float(x) => Some(*x),
        _ => None,
    };
    // Whether `a op1 x` and `a op2 y` can both hold.
    let compatible = |(op1, x): (Op, &LiteralValue), (op2, y): (Op, &LiteralValue)| -> bool {
        if let (Op::Eq, Op::Eq) = (op1, op2) {
            return x == y || matches!((number(x), number(y)), (Some(a), Some(b)) if a == b);
        }
        let (Some(a), Some(b)) = (number(x), number(y)) else {
            return true;
        };
        // The interval each allows: (low, low inclusive, high, high inclusive).
        let bounds = |op: Op, v: f64| match op {
            Op::Eq => (v, true, v, true),
            Op::Gt => (v, false, f64::INFINITY, false),
            Op::GtEq => (v, true, f64::INFINITY, false),
            Op::Lt => (f64::NEG_INFINITY, false, v, false),
            _ => (f64::NEG_INFINITY, false, v, true),
        };
        let (l1, li1, h1, hi1) = bounds(op1, a);
        let (l2, li2, h2, hi2) = bounds(op2, b);
        let (low, low_in) = if l1 > l2 || (l1 == l2 && !li1) {
            (l1, li1)
        } else {
            (l2, li2)
        };
        let (high, high_in) = if h1 < h2 || (h1 == h2 && !hi1) {
            (h1, hi1)
        } else {
            (h2, hi2)
        };
        low < high || (low == high && low_in && high_in)
    };
    tests.iter().enumerate().find_map(|(i, (c1, op1, v1))| {
        let (c2, op2, v2) = tests[i + 1..]
            .iter()
            .find(|(c2, op2, v2)| c2 == c1 && !compatible((*op1, v1), (*op2, v2)))?;
        Some(format!(
            "{c1} {} {v1} and {c2} {} {v2}",
            op1.as_str(),
            op2.as_str()
        ))
    })
}

/// Two tables a plan joins only because both refer to a third: the parent of both.
pub(super) struct SharedParent {
    /// The table both refer to, named by no word.
    pub(super) parent: String,
    /// The two tables that refer to it.
    pub(super) children: [String; 2],
    /// The mention of the later-named child (else the last mention).
    pub(super) mention: usize,
}

/// A table of the plan that no word names and that two of its joins enter as the
/// referenced side (`A → P ← B`): rows of A and B meet only by sharing a P, so each A is
/// paired with every B of its P ("the faculty of students' activities" joined through an
/// activity both take part in). A link table (`A ← L → B`) or a chain of references
/// pairs rows that belong together; a shared parent nobody asked about is a guess.
pub(super) fn shared_parent(
    analysis: &Analysis,
    index: &SchemaIndex,
    plan: &PlanModel,
) -> Option<SharedParent> {
    let table_of = |alias: &str| {
        let name = &plan.tables.iter().find(|t| t.alias == alias)?.name;
        index
            .tables
            .iter()
            .position(|t| t.name.eq_ignore_ascii_case(name))
    };
    let mut children: Vec<(usize, usize)> = Vec::new();
    for j in &plan.joins {
        let (Some(l), Some(r)) = (table_of(&j.left_alias), table_of(&j.right_alias)) else {
            continue;
        };
        let to_l = index.foreign_keys.iter().any(|f| f.from == r && f.to == l);
        let to_r = index.foreign_keys.iter().any(|f| f.from == l && f.to == r);
        match (to_l, to_r) {
            (true, false) => children.push((l, r)),
            (false, true) => children.push((r, l)),
            _ => {}
        }
    }
    let named = |t: usize| {
        analysis
            .mentions
            .iter()
            .position(|m| m.target.table(index) == t)
    };
    children.iter().find_map(|&(parent, a)| {
        let (_, b) = children.iter().find(|&&(p, b)| p == parent && b != a)?;
        if named(parent).is_some() {
            return None;
        }
        // The later-named child, else (two link tables) the question's last mention.
        let mention = named(a)
            .into_iter()
            .chain(named(*b))
            .max()
            .or(analysis.mentions.len().checked_sub(1))?;
        Some(SharedParent {
            parent: index.tables[parent].name.clone(),
            children: [index.tables[a].name.clone(), index.tables[*b].name.clone()],
            mention,
        })
    })
}
