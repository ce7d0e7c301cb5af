//! Two readings nothing tells apart (no context, score, type or role prefers either; only
//! the order of the names would): the strict planner refuses, naming both, instead of
//! answering whichever name sorts first.

use nl2sql_state::{ErrorCode, SchemaContract, SchemaSnapshot};

use super::super::OfflinePlanner;
use super::rules::{check, request_over};
use super::{col, table};

/// Two unrelated tables with a `title` each.
fn shelves() -> SchemaSnapshot {
    let mut contract = SchemaContract::new("shelves", "sqlite");
    contract.add_table(table(
        "Album",
        vec![col("AlbumID", "INTEGER", true), col("title", "TEXT", false)],
        vec![],
    ));
    contract.add_table(table(
        "Novel",
        vec![
            col("NovelID", "INTEGER", true),
            col("title", "TEXT", false),
            col("pages", "INTEGER", false),
        ],
        vec![],
    ));
    SchemaSnapshot {
        contract,
        metadata: None,
    }
}

#[test]
fn a_tie_only_the_names_order_would_break_is_refused_naming_both_readings() {
    let s = shelves();
    let e = OfflinePlanner::new()
        .plan_sync(&request_over(&s, "List all titles."))
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::AmbiguousQuestion);
    let suggestions = e.details.as_ref().unwrap()["suggestions"].to_string();
    assert!(
        suggestions.contains("column Album.title or as column Novel.title equally"),
        "{suggestions}"
    );
    // Context breaks the tie: the novels' titles.
    check(
        &s,
        "List the titles of novels with more than 300 pages.",
        "SELECT n.title AS novel FROM Novel AS n WHERE n.pages > 300 LIMIT 10000",
    );
}

/// Departments (named by `dept_name`, whose abbreviation also reads "department"), and
/// students and instructors with a `name` (college_2 of Spider train, shortened).
fn campus() -> SchemaSnapshot {
    let mut contract = SchemaContract::new("campus", "sqlite");
    contract.add_table(table(
        "department",
        vec![
            col("dept_name", "TEXT", true),
            col("building", "TEXT", false),
            col("budget", "REAL", false),
        ],
        vec![],
    ));
    contract.add_table(table(
        "student",
        vec![
            col("ID", "INTEGER", true),
            col("name", "TEXT", false),
            col("dept_name", "TEXT", false),
        ],
        vec![("dept_name", "department")],
    ));
    contract.add_table(table(
        "instructor",
        vec![
            col("ID", "INTEGER", true),
            col("name", "TEXT", false),
            col("dept_name", "TEXT", false),
            col("salary", "REAL", false),
        ],
        vec![("dept_name", "department")],
    ));
    contract.add_table(table(
        "course",
        vec![
            col("course_id", "TEXT", true),
            col("title", "TEXT", false),
            col("dept_name", "TEXT", false),
            col("credits", "INTEGER", false),
        ],
        vec![("dept_name", "department")],
    ));
    SchemaSnapshot {
        contract,
        metadata: None,
    }
}

#[test]
fn the_table_named_after_of_decides_which_name() {
    let s = campus();
    check(
        &s,
        "Give the name of the department with the lowest budget.",
        "SELECT d.dept_name AS dept_name, d.budget AS budget FROM department AS d ORDER BY d.budget LIMIT 1",
    );
    let plan = OfflinePlanner::new().plan_sync(&request_over(
        &s,
        "Find the name and building of the department with the highest budget.",
    ));
    assert!(plan.is_ok(), "{plan:?}");
}

/// Documents (cre_Docs_and_Epenses of Spider train, shortened): documents of a type,
/// some with expenses; keys named after their tables, so "ids" and "type code" are
/// columns of two tables each, and "names" of two more.
fn paperwork() -> SchemaSnapshot {
    let mut contract = SchemaContract::new("paperwork", "sqlite");
    let refer = |mut t: nl2sql_state::TableContract, to: &[&str]| {
        for (fk, column) in t.foreign_keys.iter_mut().zip(to) {
            fk.referred_columns = vec![(*column).to_owned()];
        }
        t
    };
    contract.add_table(table(
        "Ref_Document_Types",
        vec![
            col("Document_Type_Code", "TEXT", true),
            col("Document_Type_Name", "TEXT", false),
        ],
        vec![],
    ));
    contract.add_table(refer(
        table(
            "Documents",
            vec![
                col("Document_ID", "INTEGER", true),
                col("Document_Type_Code", "TEXT", false),
                col("Document_Name", "TEXT", false),
            ],
            vec![("Document_Type_Code", "Ref_Document_Types")],
        ),
        &["Document_Type_Code"],
    ));
    contract.add_table(refer(
        table(
            "Documents_with_Expenses",
            vec![
                col("Document_ID", "INTEGER", true),
                col("Budget_Type_Code", "TEXT", false),
            ],
            vec![("Document_ID", "Documents")],
        ),
        &["Document_ID"],
    ));
    SchemaSnapshot {
        contract,
        metadata: None,
    }
}

#[test]
fn a_tie_is_taken_again_with_what_the_words_after_it_decided() {
    // "names" comes first, when nothing tells `Document_Name` from `Document_Type_Name`;
    // the words after it ("ids of documents", "type code") decide it afterwards, so it
    // is no longer a guess.
    use super::super::intent::{Day, cues};
    use super::super::link::{SchemaIndex, Target, link};
    use super::super::text::tokenize;
    let snapshot = paperwork();
    let index = SchemaIndex::build(&snapshot);
    let question = "What are the names and ids of documents that have the type code BK?";
    let tokens = tokenize(question);
    let c = cues(&tokens, Day::parse("2024-05-15").unwrap());
    let mentions = link(question, &tokens, &c.used, &index);
    let names = mentions
        .iter()
        .find(|m| tokens[m.start].lower == "names")
        .expect("'names' is linked");
    let Target::Column(column) = names.target else {
        panic!("{:?}", names.target)
    };
    assert_eq!(index.columns[column].name, "Document_Name");
    assert!(names.guess.is_none(), "{:?}", names.guess);
}
