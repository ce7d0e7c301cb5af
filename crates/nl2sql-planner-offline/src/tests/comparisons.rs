//! Where a comparison's column is: named between the word and the number ("above age
//! 46"), implied by the comparative ("older than 46" is an age) even when another column
//! follows after "and", and never a column named after a conjunction or a sort phrase
//! ("bigger than 100 ordered by year"); a comparison with nothing the plan compares, and
//! "all" of a table whose rows say which rows are read, are refused, not dropped; and so
//! are conditions no one row can meet together ("older than 60 and younger than 30").

use nl2sql_state::SchemaSnapshot;

use super::literals::gallery;
use super::rules::{check, check_placed, refused_placing, refused_saying};
use super::{col, samples, snapshot_of, table};

#[test]
fn a_column_between_the_word_and_the_number_is_compared() {
    check(
        &gallery(),
        "How many artists are above age 46?",
        "SELECT COUNT(*) AS artist_count FROM artist AS a WHERE a.age > 46 LIMIT 10000",
    );
}

/// Artists with an age and the year they joined.
fn members() -> SchemaSnapshot {
    snapshot_of(
        "members",
        vec![table(
            "artist",
            vec![
                col("artist_id", "INTEGER", true),
                col("name", "TEXT", false),
                col("age", "INTEGER", false),
                col("year_join", "INTEGER", false),
            ],
            vec![],
        )],
    )
}

#[test]
fn a_column_after_and_is_not_the_one_compared() {
    check(
        &members(),
        "Count the number of artists who are older than 46 and joined after 1990.",
        "SELECT COUNT(*) AS artist_count FROM artist AS a WHERE a.age > 46 AND a.year_join > 1990 LIMIT 10000",
    );
    check(
        &gallery(),
        "List the names of pictures whose price is bigger than 100 ordered by room.",
        "SELECT p.picture_name AS picture_name, p.room AS room FROM picture AS p WHERE p.price > 100 ORDER BY p.room LIMIT 10000",
    );
}

#[test]
fn a_bound_before_older_or_younger_is_an_age() {
    // "aged" names the age; "or older" is at least the number, "or younger" at most.
    check_placed(
        &members(),
        "Show the names of artists aged 46 or older.",
        "SELECT a.name AS artist FROM artist AS a WHERE a.age >= 46 LIMIT 10000",
    );
    check_placed(
        &members(),
        "List the names of artists 30 or younger.",
        "SELECT a.name AS artist FROM artist AS a WHERE a.age <= 30 LIMIT 10000",
    );
    check_placed(
        &members(),
        "What are the names of the artists aged 46?",
        "SELECT a.name AS artist FROM artist AS a WHERE a.age = 46 LIMIT 10000",
    );
}

#[test]
fn years_old_and_how_old_are_an_age() {
    check_placed(
        &members(),
        "How many artists are 46 years old?",
        "SELECT COUNT(*) AS artist_count FROM artist AS a WHERE a.age = 46 LIMIT 10000",
    );
    check_placed(
        &members(),
        "Show the names of artists over 40 years old.",
        "SELECT a.name AS artist FROM artist AS a WHERE a.age > 40 LIMIT 10000",
    );
    check_placed(
        &members(),
        "How old is the artist who joined most recently?",
        "SELECT a.name AS artist, a.age AS age, a.year_join AS year_join FROM artist AS a ORDER BY a.year_join DESC LIMIT 1",
    );
    // "old" alone keeps its other senses: no age.
    refused_saying(
        &members(),
        "List the old names of artists.",
        "could not link: 'old'",
    );
}

#[test]
fn numbers_joined_by_or_are_values_of_one_column() {
    check_placed(
        &members(),
        "Show the names of artists aged either 35 or 36.",
        "SELECT a.name AS artist FROM artist AS a WHERE a.age IN (35, 36) LIMIT 10000",
    );
    check_placed(
        &members(),
        "Show the names of artists whose age is 35 or 36 or 40.",
        "SELECT a.name AS artist FROM artist AS a WHERE a.age IN (35, 36, 40) LIMIT 10000",
    );
    // A number after "or" that no number before it gives a column stays unread.
    refused_placing(&members(), "Show the names of artists or 36.", "or', '36");
}

#[test]
fn he_or_she_is_one_person_not_a_choice() {
    check_placed(
        &members(),
        "Who is the oldest artist? Give his or her name.",
        "SELECT a.name AS artist, a.age AS age FROM artist AS a ORDER BY a.age DESC LIMIT 1",
    );
    // Any other "or" the plan cannot read still refuses the question.
    refused_placing(&members(), "Show the names or ages of artists.", "or");
}

#[test]
fn conditions_no_row_can_meet_together_are_refused() {
    // Read as one row's conditions, these select nothing whatever the data: the question
    // means artists (or countries) with some rows of each kind.
    refused_saying(
        &members(),
        "Show the names of artists older than 60 and artists younger than 30.",
        "cannot all hold on one row (a.age > 60 and a.age < 30)",
    );
    // A range that some row can meet stays.
    check(
        &members(),
        "Show the names of artists older than 30 and younger than 60.",
        "SELECT a.name AS artist FROM artist AS a WHERE a.age > 30 AND a.age < 60 LIMIT 10000",
    );
}

/// People, some of whom are gymnasts (a gymnast's key is a person's), with jobs.
fn athletes() -> SchemaSnapshot {
    let mut gymnast = table(
        "gymnast",
        vec![
            col("gymnast_id", "INTEGER", true),
            col("total_points", "REAL", false),
        ],
        vec![("gymnast_id", "people")],
    );
    gymnast.foreign_keys[0].referred_columns = vec!["people_id".into()];
    snapshot_of(
        "athletes",
        vec![
            table(
                "people",
                vec![
                    col("people_id", "INTEGER", true),
                    col("name", "TEXT", false),
                    col("age", "INTEGER", false),
                    col("job", "TEXT", false),
                ],
                vec![],
            ),
            gymnast,
        ],
    )
}

#[test]
fn a_comparison_with_nothing_to_compare_is_refused() {
    // "greater than any engineer" compares with a subquery the planner does not write; the
    // plan must not become a list of engineers with "greater than" dropped.
    refused_placing(
        &athletes(),
        "Find the names of people whose age is greater than any engineer.",
        "greater than",
    );
    // One comparison word before "any" the same.
    refused_placing(
        &athletes(),
        "Find the names of people with an age above any engineer.",
        "above",
    );
    // With a number it is a comparison.
    check(
        &athletes(),
        "Find the names of people whose age is greater than 30.",
        "SELECT p.name AS person FROM people AS p WHERE p.age > 30 LIMIT 10000",
    );
}

#[test]
fn all_of_a_table_whose_rows_refer_to_the_rows_read_restricts_them() {
    // "all gymnasts" is not "all people": gymnasts refer to people, so the table says which
    // people, and a plan without it is refused.
    refused_placing(
        &athletes(),
        "What is the average age of all gymnasts?",
        "gymnasts",
    );
}

/// Clubs and their players, with their points, age and position (Forward, Keeper).
fn clubs() -> SchemaSnapshot {
    let mut s = snapshot_of(
        "clubs",
        vec![
            table(
                "club",
                vec![col("id", "INTEGER", true), col("name", "TEXT", false)],
                vec![],
            ),
            table(
                "player",
                vec![
                    col("id", "INTEGER", true),
                    col("name", "TEXT", false),
                    col("points", "INTEGER", false),
                    col("age", "INTEGER", false),
                    col("position", "TEXT", false),
                    col("club_id", "INTEGER", false),
                ],
                vec![("club_id", "club")],
            ),
        ],
    );
    super::rules::describe(
        &mut s,
        "player",
        "position",
        samples(&["Forward", "Keeper"]),
    );
    s
}

#[test]
fn rows_listed_of_all_of_a_table_are_that_tables_own() {
    // "the names and players of all the clubs" lists clubs; players' names alone are not
    // an answer, and "all the clubs" is no quantifier here.
    refused_placing(
        &clubs(),
        "What are the names and players of all the clubs?",
        "clubs",
    );
    // A figure computed over players of all the clubs is over every player.
    check_placed(
        &clubs(),
        "What is the total points of the players of all the clubs?",
        "SELECT SUM(p.points) AS total_points FROM player AS p LIMIT 10000",
    );
}

/// Stadiums and swimmers, linked only through races (each race in a stadium, each entry a
/// swimmer in a race).
fn pools() -> SchemaSnapshot {
    snapshot_of(
        "pools",
        vec![
            table(
                "stadium",
                vec![
                    col("id", "INTEGER", true),
                    col("name", "TEXT", false),
                    col("country", "TEXT", false),
                ],
                vec![],
            ),
            table(
                "swimmer",
                vec![
                    col("id", "INTEGER", true),
                    col("name", "TEXT", false),
                    col("nationality", "TEXT", false),
                ],
                vec![],
            ),
            table(
                "race",
                vec![
                    col("id", "INTEGER", true),
                    col("stadium_id", "INTEGER", false),
                ],
                vec![("stadium_id", "stadium")],
            ),
            table(
                "entry",
                vec![
                    col("id", "INTEGER", true),
                    col("race_id", "INTEGER", false),
                    col("swimmer_id", "INTEGER", false),
                ],
                vec![("race_id", "race"), ("swimmer_id", "swimmer")],
            ),
        ],
    )
}

#[test]
fn all_of_a_table_the_rows_read_do_not_belong_to_is_not_a_quantifier() {
    // The stadiums' countries are not the swimmers' countries: "all the swimmers" says
    // whose countries, and a plan over stadiums alone is refused.
    refused_placing(
        &pools(),
        "How many different countries are all the swimmers from?",
        "swimmers",
    );
}

#[test]
fn a_column_compared_with_its_average_over_all_rows_is_a_subquery() {
    let library = super::absent::library();
    // The column named after "average", before the comparison, or both.
    check_placed(
        &library,
        "How many books have more pages than the average?",
        "SELECT COUNT(*) AS book_count FROM Book AS b WHERE b.Pages > (SELECT AVG(a.Pages) FROM Book AS a) LIMIT 10000",
    );
    check_placed(
        &library,
        "Which books have pages above the average pages?",
        "SELECT b.Title AS book FROM Book AS b WHERE b.Pages > (SELECT AVG(a.Pages) FROM Book AS a) LIMIT 10000",
    );
    check_placed(
        &clubs(),
        "What are the names of all players that got more than the average number of points?",
        "SELECT p.name AS player FROM player AS p WHERE p.points > (SELECT AVG(a.points) FROM player AS a) LIMIT 10000",
    );
    // Implied by the comparative, and over all the rows named.
    check_placed(
        &clubs(),
        "Which players are younger than the average age of all players?",
        "SELECT p.name AS player FROM player AS p WHERE p.age < (SELECT AVG(a.age) FROM player AS a) LIMIT 10000",
    );
}

#[test]
fn shorter_implies_a_height_like_taller() {
    check_placed(
        &super::listings::athletes(),
        "What are the names of people who are shorter than average?",
        "SELECT p.name AS person FROM people AS p WHERE p.height < (SELECT AVG(a.height) FROM people AS a) LIMIT 10000",
    );
}

#[test]
fn a_column_compared_with_an_extreme_of_some_rows_is_a_subquery() {
    let s = clubs();
    // "every"/"all": beyond the largest (or below the smallest); "at least one"/"some":
    // beyond the smallest (or below the largest); a named extreme is itself.
    check_placed(
        &s,
        "How many players are older than every Keeper?",
        "SELECT COUNT(*) AS player_count FROM player AS p WHERE p.age > (SELECT MAX(a.age) FROM player AS a WHERE a.position = 'Keeper') LIMIT 10000",
    );
    check_placed(
        &s,
        "Which players are younger than at least one Keeper?",
        "SELECT p.name AS player FROM player AS p WHERE p.age < (SELECT MAX(a.age) FROM player AS a WHERE a.position = 'Keeper') LIMIT 10000",
    );
    check_placed(
        &s,
        "Which players have points less than the maximum points?",
        "SELECT p.name AS player FROM player AS p WHERE p.points < (SELECT MAX(a.points) FROM player AS a) LIMIT 10000",
    );
    check_placed(
        &s,
        "Which players have more points than the average points of Forward players?",
        "SELECT p.name AS player FROM player AS p WHERE p.points > (SELECT AVG(a.points) FROM player AS a WHERE a.position = 'Forward') LIMIT 10000",
    );
}

#[test]
fn a_computed_value_over_rows_it_cannot_read_is_refused_not_dropped() {
    // The rows computed over are narrowed by another table ("of club Ajax"), grouped
    // ("for each club"), unnamed ("older than every"), or "any" (which says either
    // extreme); or the compared column is not the aggregated one: read otherwise the
    // condition would be wrong or dropped.
    for question in [
        "Which players have more points than the average points of players in club Ajax?",
        "Which players have points above the average age?",
        "Which players are older than the mean of their club?",
        "How many players are older than the average age for each club?",
        "Which players are older than every?",
    ] {
        refused_saying(
            &clubs(),
            question,
            "compares with a value computed over rows this planner could not read",
        );
    }
    // "any" says either extreme: the comparison stays unread.
    refused_placing(
        &clubs(),
        "Which players are older than any Keeper?",
        "older', 'older than",
    );
}

/// "counties that have at least two delegates": a plural naming a text column (each row
/// holds one delegate) counts its table's rows per answer; a column whose name says it
/// holds an amount (`membership_amount`, a number kept as text) is compared instead.
#[test]
fn a_count_of_a_text_column_plural_counts_its_rows() {
    let s = snapshot_of(
        "polls",
        vec![
            table(
                "county",
                vec![
                    col("id", "INTEGER", true),
                    col("County_name", "TEXT", false),
                ],
                vec![],
            ),
            table(
                "election",
                vec![
                    col("Election_ID", "INTEGER", true),
                    col("District", "INTEGER", false),
                    col("Delegate", "TEXT", false),
                ],
                vec![("District", "county")],
            ),
            table(
                "branch",
                vec![
                    col("Branch_ID", "INTEGER", true),
                    col("City", "TEXT", false),
                    col("membership_amount", "TEXT", false),
                ],
                vec![],
            ),
        ],
    );
    check_placed(
        &s,
        "Show the names of counties that have at least two delegates.",
        "SELECT c.County_name AS county_name, COUNT(*) AS election_count FROM election AS e INNER JOIN county AS c ON e.District = c.id GROUP BY c.id, c.County_name HAVING COUNT(*) >= 2 ORDER BY c.id, c.County_name LIMIT 10000",
    );
    let amount = super::rules::sql_over(
        &s,
        "Which cities have branches with at least 100 memberships?",
    );
    assert!(!amount.contains("COUNT(*)"), "{amount}");
}

#[test]
fn the_same_value_as_another_column_is_refused_not_dropped() {
    refused_saying(
        &gallery(),
        "Which pictures have the same name as their artist's last name?",
        "'same name as' compares two values of the rows with each other",
    );
}

#[test]
fn a_total_amount_of_more_than_n_in_a_table_compares_the_sum_not_a_count() {
    let s = snapshot_of(
        "lending",
        vec![
            table(
                "customer",
                vec![col("id", "INTEGER", true), col("cust_name", "TEXT", false)],
                vec![],
            ),
            table(
                "loan",
                vec![
                    col("loan_id", "INTEGER", true),
                    col("amount", "INTEGER", false),
                    col("cust_id", "INTEGER", false),
                ],
                vec![("cust_id", "customer")],
            ),
        ],
    );
    // Not `HAVING COUNT(*) > 5000`: the 5000 is an amount, the loans hold it.
    check(
        &s,
        "What are the names of customers who have taken a total amount of more than 5000 in loans?",
        "SELECT c.cust_name AS cust_name, SUM(l.amount) AS total_amount FROM loan AS l INNER JOIN customer AS c ON l.cust_id = c.id GROUP BY c.id, c.cust_name HAVING SUM(l.amount) > 5000 ORDER BY c.id, c.cust_name LIMIT 10000",
    );
}

/// Films with their studio and gross; instructors with their department's salary.
fn studios() -> SchemaSnapshot {
    snapshot_of(
        "studios",
        vec![
            table(
                "film",
                vec![
                    col("film_id", "INTEGER", true),
                    col("title", "TEXT", false),
                    col("studio", "TEXT", false),
                    col("gross", "INTEGER", false),
                ],
                vec![],
            ),
            table(
                "department",
                vec![col("id", "INTEGER", true), col("dept_name", "TEXT", false)],
                vec![],
            ),
            table(
                "instructor",
                vec![
                    col("instructor_id", "INTEGER", true),
                    col("name", "TEXT", false),
                    col("salary", "INTEGER", false),
                    col("dept_id", "INTEGER", false),
                ],
                vec![("dept_id", "department")],
            ),
        ],
    )
}

#[test]
fn an_aggregate_named_before_the_compared_column_is_each_groups_condition() {
    let s = studios();
    // Not `WHERE gross > 4500000` with the average left unplaced: each studio's average.
    check(
        &s,
        "Which studios have an average gross of over 4500000?",
        "SELECT f.studio AS studio, AVG(f.gross) AS avg_gross FROM film AS f GROUP BY f.studio HAVING AVG(f.gross) > 4500000 ORDER BY f.studio LIMIT 10000",
    );
    check(
        &s,
        "List the studios whose maximum gross is below 1000.",
        "SELECT f.studio AS studio, MAX(f.gross) AS max_gross FROM film AS f GROUP BY f.studio HAVING MAX(f.gross) < 1000 ORDER BY f.studio LIMIT 10000",
    );
    check(
        &s,
        "Which departments have an average salary above 80000?",
        "SELECT d.dept_name AS dept_name, AVG(i.salary) AS avg_salary FROM instructor AS i INNER JOIN department AS d ON i.dept_id = d.id GROUP BY d.id, d.dept_name HAVING AVG(i.salary) > 80000 ORDER BY d.id, d.dept_name LIMIT 10000",
    );
}

#[test]
fn an_aggregate_condition_with_no_group_is_refused() {
    refused_saying(
        &studios(),
        "What is the average gross above 4500000?",
        "names no groups",
    );
}

#[test]
fn a_groups_aggregate_compared_with_a_computed_value_is_a_having_with_a_subquery() {
    let s = studios();
    // Not `WHERE f.gross > (SELECT AVG …)` with the first "average" unplaced.
    check(
        &s,
        "Which studios have an average gross higher than the average gross of all films?",
        "SELECT f.studio AS studio, AVG(f.gross) AS avg_gross FROM film AS f GROUP BY f.studio HAVING AVG(f.gross) > (SELECT AVG(a.gross) FROM film AS a) ORDER BY f.studio LIMIT 10000",
    );
    // A row's own value compared is still a row filter.
    check(
        &s,
        "Which films have a gross higher than the average gross?",
        "SELECT f.title AS film FROM film AS f WHERE f.gross > (SELECT AVG(a.gross) FROM film AS a) LIMIT 10000",
    );
}
