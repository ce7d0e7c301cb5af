-- The schema of sqlglot's optimizer tests (`self.schema` in tests/test_optimizer.py), as DDL.
-- Converted by hand from the Python dict (test_optimizer_schema_excerpt.py.txt); column
-- order and types as there. Written for the generic dialect (STRUCT<...> types); no rows.
CREATE TABLE x (a INT, b INT);
CREATE TABLE y (b INT, c INT);
CREATE TABLE z (b INT, c INT);
CREATE TABLE w (d TEXT, e TEXT);
CREATE TABLE temporal (d DATE, t DATETIME);
CREATE TABLE structs (
  one STRUCT<a_1 INT, b_1 VARCHAR>,
  nested_0 STRUCT<a_1 INT, nested_1 STRUCT<a_2 INT, nested_2 STRUCT<a_3 INT>>>,
  quoted STRUCT<"foo bar" INT>
);
CREATE TABLE t_bool (a BOOLEAN, b BOOLEAN);
CREATE TABLE unpivotable (id INT, jan INT, feb INT, north INT, south INT);
CREATE TABLE pivotable (id INT, cat TEXT, val INT, kind TEXT, amt INT);
