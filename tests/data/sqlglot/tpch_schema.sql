-- The TPC-H schema of sqlglot's tests (TPCH_SCHEMA in tests/helpers.py), as DDL.
-- Converted from the Python dict (helpers_schemas.py.txt); column order as there, types
-- mapped bigint -> BIGINT, int -> INTEGER, double -> DOUBLE, string -> VARCHAR.
-- Loads in the generic and DuckDB dialects; no keys or rows (sqlglot's schema has none).
CREATE TABLE lineitem (
  l_orderkey BIGINT,
  l_partkey BIGINT,
  l_suppkey BIGINT,
  l_linenumber BIGINT,
  l_quantity DOUBLE,
  l_extendedprice DOUBLE,
  l_discount DOUBLE,
  l_tax DOUBLE,
  l_returnflag VARCHAR,
  l_linestatus VARCHAR,
  l_shipdate VARCHAR,
  l_commitdate VARCHAR,
  l_receiptdate VARCHAR,
  l_shipinstruct VARCHAR,
  l_shipmode VARCHAR,
  l_comment VARCHAR
);
CREATE TABLE orders (
  o_orderkey BIGINT,
  o_custkey BIGINT,
  o_orderstatus VARCHAR,
  o_totalprice DOUBLE,
  o_orderdate VARCHAR,
  o_orderpriority VARCHAR,
  o_clerk VARCHAR,
  o_shippriority INTEGER,
  o_comment VARCHAR
);
CREATE TABLE customer (
  c_custkey BIGINT,
  c_name VARCHAR,
  c_address VARCHAR,
  c_nationkey BIGINT,
  c_phone VARCHAR,
  c_acctbal DOUBLE,
  c_mktsegment VARCHAR,
  c_comment VARCHAR
);
CREATE TABLE part (
  p_partkey BIGINT,
  p_name VARCHAR,
  p_mfgr VARCHAR,
  p_brand VARCHAR,
  p_type VARCHAR,
  p_size INTEGER,
  p_container VARCHAR,
  p_retailprice DOUBLE,
  p_comment VARCHAR
);
CREATE TABLE supplier (
  s_suppkey BIGINT,
  s_name VARCHAR,
  s_address VARCHAR,
  s_nationkey BIGINT,
  s_phone VARCHAR,
  s_acctbal DOUBLE,
  s_comment VARCHAR
);
CREATE TABLE partsupp (
  ps_partkey BIGINT,
  ps_suppkey BIGINT,
  ps_availqty INTEGER,
  ps_supplycost DOUBLE,
  ps_comment VARCHAR
);
CREATE TABLE nation (
  n_nationkey BIGINT,
  n_name VARCHAR,
  n_regionkey BIGINT,
  n_comment VARCHAR
);
CREATE TABLE region (
  r_regionkey BIGINT,
  r_name VARCHAR,
  r_comment VARCHAR
);
