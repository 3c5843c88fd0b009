"""TPC-C's tables, indexes, transaction statements and consistency queries, per SQL dialect,
as data (TPC-C standard specification 5.11, clauses 1.3, 2.4-2.8 and 3.3.2).

Column names and types follow the specification (and go-tpc's DDL, so that either tool's
``check`` runs on data the other loaded). ``{ts}`` is the dialect's timestamp type,
``{options}`` what a CREATE TABLE ends with on the session (MySQL's ENGINE=), ``{fu}`` the
locking-read suffix (``FOR UPDATE``; SQLite locks the database at BEGIN IMMEDIATE instead),
``%s`` a parameter.
"""
from __future__ import annotations

from typing import Any

TABLES = ("warehouse", "district", "customer", "history", "new_order", "orders", "order_line", "item", "stock")

TYPES = {
    "postgresql": {"ts": "TIMESTAMP", "fu": " FOR UPDATE"},
    "mysql": {"ts": "DATETIME", "fu": " FOR UPDATE"},
    "sqlite": {"ts": "TIMESTAMP", "fu": ""},
}

CREATE = {
    "warehouse": """CREATE TABLE warehouse (
        w_id INT NOT NULL, w_name VARCHAR(10), w_street_1 VARCHAR(20), w_street_2 VARCHAR(20),
        w_city VARCHAR(20), w_state CHAR(2), w_zip CHAR(9), w_tax DECIMAL(4, 4), w_ytd DECIMAL(12, 2),
        PRIMARY KEY (w_id)){options}""",
    "district": """CREATE TABLE district (
        d_id INT NOT NULL, d_w_id INT NOT NULL, d_name VARCHAR(10), d_street_1 VARCHAR(20),
        d_street_2 VARCHAR(20), d_city VARCHAR(20), d_state CHAR(2), d_zip CHAR(9), d_tax DECIMAL(4, 4),
        d_ytd DECIMAL(12, 2), d_next_o_id INT,
        PRIMARY KEY (d_w_id, d_id)){options}""",
    "customer": """CREATE TABLE customer (
        c_id INT NOT NULL, c_d_id INT NOT NULL, c_w_id INT NOT NULL, c_first VARCHAR(16), c_middle CHAR(2),
        c_last VARCHAR(16), c_street_1 VARCHAR(20), c_street_2 VARCHAR(20), c_city VARCHAR(20),
        c_state CHAR(2), c_zip CHAR(9), c_phone CHAR(16), c_since {ts}, c_credit CHAR(2),
        c_credit_lim DECIMAL(12, 2), c_discount DECIMAL(4, 4), c_balance DECIMAL(12, 2),
        c_ytd_payment DECIMAL(12, 2), c_payment_cnt INT, c_delivery_cnt INT, c_data VARCHAR(500),
        PRIMARY KEY (c_w_id, c_d_id, c_id)){options}""",
    "history": """CREATE TABLE history (
        h_c_id INT NOT NULL, h_c_d_id INT NOT NULL, h_c_w_id INT NOT NULL, h_d_id INT NOT NULL,
        h_w_id INT NOT NULL, h_date {ts}, h_amount DECIMAL(6, 2), h_data VARCHAR(24)){options}""",
    "new_order": """CREATE TABLE new_order (
        no_o_id INT NOT NULL, no_d_id INT NOT NULL, no_w_id INT NOT NULL,
        PRIMARY KEY (no_w_id, no_d_id, no_o_id)){options}""",
    "orders": """CREATE TABLE orders (
        o_id INT NOT NULL, o_d_id INT NOT NULL, o_w_id INT NOT NULL, o_c_id INT, o_entry_d {ts},
        o_carrier_id INT, o_ol_cnt INT, o_all_local INT,
        PRIMARY KEY (o_w_id, o_d_id, o_id)){options}""",
    "order_line": """CREATE TABLE order_line (
        ol_o_id INT NOT NULL, ol_d_id INT NOT NULL, ol_w_id INT NOT NULL, ol_number INT NOT NULL,
        ol_i_id INT NOT NULL, ol_supply_w_id INT, ol_delivery_d {ts}, ol_quantity INT,
        ol_amount DECIMAL(6, 2), ol_dist_info CHAR(24),
        PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number)){options}""",
    "item": """CREATE TABLE item (
        i_id INT NOT NULL, i_im_id INT, i_name VARCHAR(24), i_price DECIMAL(5, 2), i_data VARCHAR(50),
        PRIMARY KEY (i_id)){options}""",
    "stock": """CREATE TABLE stock (
        s_i_id INT NOT NULL, s_w_id INT NOT NULL, s_quantity INT,
        s_dist_01 CHAR(24), s_dist_02 CHAR(24), s_dist_03 CHAR(24), s_dist_04 CHAR(24), s_dist_05 CHAR(24),
        s_dist_06 CHAR(24), s_dist_07 CHAR(24), s_dist_08 CHAR(24), s_dist_09 CHAR(24), s_dist_10 CHAR(24),
        s_ytd INT, s_order_cnt INT, s_remote_cnt INT, s_data VARCHAR(50),
        PRIMARY KEY (s_w_id, s_i_id)){options}""",
}

# secondary indexes (built after the load, as go-tpc and HammerDB do): Payment / Order-Status by
# last name, Order-Status's last order of a customer, and the history sums of the checks
INDEXES = {
    "idx_customer": ("customer", "c_w_id, c_d_id, c_last, c_first"),
    "idx_order": ("orders", "o_w_id, o_d_id, o_c_id, o_id"),
    "idx_h_w_id": ("history", "h_w_id, h_d_id"),
    "idx_h_c_w_id": ("history", "h_c_w_id, h_c_d_id, h_c_id"),
}
CREATE_INDEX = {"postgresql": "CREATE INDEX IF NOT EXISTS {name} ON {table} ({cols})",
                "sqlite": "CREATE INDEX IF NOT EXISTS {name} ON {table} ({cols})",
                "mysql": "CREATE INDEX {name} ON {table} ({cols})"}
INDEX_EXISTS = {"mysql": "SELECT COUNT(*) FROM information_schema.statistics WHERE table_schema = DATABASE() "
                         "AND table_name = %s AND index_name = %s"}
DROP = "DROP TABLE IF EXISTS {t}"
# fresh planner statistics before the consistency check: planned on a just-loaded PostgreSQL
# database whose autovacuum has not analyzed it yet, condition 3.3.2.10's joins ran as nested
# loops for more than 15 minutes on 2 warehouses (go-tpc's load), against under a second once
# analyzed. MariaDB's InnoDB keeps persistent statistics, recomputed as rows change.
ANALYZE = {"postgresql": "ANALYZE " + ", ".join(TABLES), "sqlite": "ANALYZE"}

# the load: one multi-row INSERT per batch (a unit is a district, in one transaction)
COLUMNS = {
    "item": ("i_id", "i_im_id", "i_name", "i_price", "i_data"),
    "warehouse": ("w_id", "w_name", "w_street_1", "w_street_2", "w_city", "w_state", "w_zip", "w_tax", "w_ytd"),
    "district": ("d_id", "d_w_id", "d_name", "d_street_1", "d_street_2", "d_city", "d_state", "d_zip", "d_tax",
                 "d_ytd", "d_next_o_id"),
    "customer": ("c_id", "c_d_id", "c_w_id", "c_first", "c_middle", "c_last", "c_street_1", "c_street_2", "c_city",
                 "c_state", "c_zip", "c_phone", "c_since", "c_credit", "c_credit_lim", "c_discount", "c_balance",
                 "c_ytd_payment", "c_payment_cnt", "c_delivery_cnt", "c_data"),
    "history": ("h_c_id", "h_c_d_id", "h_c_w_id", "h_d_id", "h_w_id", "h_date", "h_amount", "h_data"),
    "orders": ("o_id", "o_d_id", "o_w_id", "o_c_id", "o_entry_d", "o_carrier_id", "o_ol_cnt", "o_all_local"),
    "new_order": ("no_o_id", "no_d_id", "no_w_id"),
    "order_line": ("ol_o_id", "ol_d_id", "ol_w_id", "ol_number", "ol_i_id", "ol_supply_w_id", "ol_delivery_d",
                   "ol_quantity", "ol_amount", "ol_dist_info"),
    "stock": ("s_i_id", "s_w_id", "s_quantity", "s_dist_01", "s_dist_02", "s_dist_03", "s_dist_04", "s_dist_05",
              "s_dist_06", "s_dist_07", "s_dist_08", "s_dist_09", "s_dist_10", "s_ytd", "s_order_cnt",
              "s_remote_cnt", "s_data"),
}
# a load unit already written (its district row is committed with the rest of the unit)
DISTRICT_EXISTS = "SELECT COUNT(*) FROM district WHERE d_w_id = %s AND d_id = %s"
ITEMS_EXIST = "SELECT COUNT(*) FROM item WHERE i_id BETWEEN %s AND %s"

# ---- the five transactions (clause 2.4 - 2.8) ---------------------------------------------------
STATEMENTS = {
    # New-Order (batched as go-tpc: the order lines' items, stock reads, stock updates and inserts are
    # one statement each, built per line count by the functions below; w_tax read with the customer)
    "no_cw": "SELECT c_discount, c_last, c_credit, w_tax FROM customer, warehouse "
             "WHERE w_id = %s AND c_w_id = w_id AND c_d_id = %s AND c_id = %s",
    "no_d": "SELECT d_tax, d_next_o_id FROM district WHERE d_w_id = %s AND d_id = %s{fu}",
    "no_d_upd": "UPDATE district SET d_next_o_id = %s WHERE d_w_id = %s AND d_id = %s",
    "no_o_ins": "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local) "
                "VALUES (%s, %s, %s, %s, CURRENT_TIMESTAMP, NULL, %s, %s)",
    "no_no_ins": "INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (%s, %s, %s)",
    # Payment
    "p_w_upd": "UPDATE warehouse SET w_ytd = w_ytd + %s WHERE w_id = %s",
    "p_w": "SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip FROM warehouse WHERE w_id = %s",
    "p_d_upd": "UPDATE district SET d_ytd = d_ytd + %s WHERE d_w_id = %s AND d_id = %s",
    "p_d": "SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip FROM district WHERE d_w_id = %s AND d_id = %s",
    "c_by_name": "SELECT c_id FROM customer WHERE c_w_id = %s AND c_d_id = %s AND c_last = %s ORDER BY c_first",
    "p_c": "SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_credit, "
           "c_credit_lim, c_discount, c_balance, c_since FROM customer WHERE c_w_id = %s AND c_d_id = %s AND c_id = %s{fu}",
    "p_c_data": "SELECT c_data FROM customer WHERE c_w_id = %s AND c_d_id = %s AND c_id = %s",
    "p_c_upd": "UPDATE customer SET c_balance = c_balance - %s, c_ytd_payment = c_ytd_payment + %s, "
               "c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = %s AND c_d_id = %s AND c_id = %s",
    "p_c_upd_bc": "UPDATE customer SET c_balance = c_balance - %s, c_ytd_payment = c_ytd_payment + %s, "
                  "c_payment_cnt = c_payment_cnt + 1, c_data = %s WHERE c_w_id = %s AND c_d_id = %s AND c_id = %s",
    "p_h_ins": "INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data) "
               "VALUES (%s, %s, %s, %s, %s, CURRENT_TIMESTAMP, %s, %s)",
    # Order-Status
    "os_c": "SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = %s AND c_d_id = %s AND c_id = %s",
    "os_o": "SELECT o_id, o_carrier_id, o_entry_d FROM orders WHERE o_w_id = %s AND o_d_id = %s AND o_c_id = %s "
            "ORDER BY o_id DESC LIMIT 1",
    "os_ol": "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line "
             "WHERE ol_w_id = %s AND ol_d_id = %s AND ol_o_id = %s",
    # Delivery
    "dl_no": "SELECT no_o_id FROM new_order WHERE no_w_id = %s AND no_d_id = %s ORDER BY no_o_id LIMIT 1{fu}",
    "dl_c_upd": "UPDATE customer SET c_balance = c_balance + %s, c_delivery_cnt = c_delivery_cnt + 1 "
                "WHERE c_w_id = %s AND c_d_id = %s AND c_id = %s",
    # Stock-Level
    "sl_d": "SELECT d_next_o_id FROM district WHERE d_w_id = %s AND d_id = %s",
    "sl_count": "SELECT COUNT(DISTINCT s_i_id) FROM order_line, stock WHERE ol_w_id = %s AND ol_d_id = %s "
                "AND ol_o_id < %s AND ol_o_id >= %s AND s_w_id = %s AND s_i_id = ol_i_id AND s_quantity < %s",
}


def new_order_items(n: int) -> str:
    """The items of n distinct item numbers (an unused one is simply not returned)."""
    return f"SELECT i_id, i_price, i_name, i_data FROM item WHERE i_id IN ({', '.join(['%s'] * n)})"


def new_order_stock(n: int, district: int, dialect: str) -> str:
    """n stock rows by (warehouse, item), locked; the district's s_dist_xx."""
    pairs = ", ".join(["(%s, %s)"] * n)
    return text(f"SELECT s_w_id, s_i_id, s_quantity, s_data, s_dist_{district:02d} FROM stock "
                f"WHERE (s_w_id, s_i_id) IN ({pairs}){{fu}}", dialect)


def new_order_stock_update(n: int, dialect: str) -> str:
    """n stock rows updated in one statement from rows (w, i, quantity, ytd added, orders added,
    remote orders added): the new quantities are computed by the client from the locked read."""
    sets = "s_quantity = v.q, s_ytd = s_ytd + v.y, s_order_cnt = s_order_cnt + v.n, s_remote_cnt = s_remote_cnt + v.r"
    if dialect == "postgresql":  # parameters in text form: the VALUES list needs its types
        row = "(" + ", ".join(["CAST(%s AS INT)"] * 6) + ")"
        return (f"UPDATE stock SET {sets} FROM (VALUES {', '.join([row] * n)}) AS v (w, i, q, y, n, r) "
                "WHERE s_w_id = v.w AND s_i_id = v.i")
    if dialect == "mysql":
        # one single-table UPDATE of the rows found by primary key, each column's value by CASE
        # (parameters: stock_update_args). A multi-table UPDATE joined to a UNION ALL of the rows
        # cost MariaDB 42 handler reads for 10 lines (the derived table scanned, then every row
        # read again by position), 4.2 a line against go-tpc's one UPDATE per line (1 a line):
        # 146 handler reads per New-Order against go-tpc's 115. This form reads 1 a line.
        when = " ".join(["WHEN s_w_id = %s AND s_i_id = %s THEN %s"] * n)
        return (f"UPDATE stock SET s_quantity = CASE {when} END, s_ytd = s_ytd + CASE {when} END, "
                f"s_order_cnt = s_order_cnt + CASE {when} END, s_remote_cnt = s_remote_cnt + CASE {when} END "
                f"WHERE (s_w_id, s_i_id) IN ({', '.join(['(%s, %s)'] * n)})")
    rows = " UNION ALL ".join(["SELECT %s AS w, %s AS i, %s AS q, %s AS y, %s AS n, %s AS r"]
                              + ["SELECT %s, %s, %s, %s, %s, %s"] * (n - 1))
    return f"UPDATE stock SET {sets} FROM ({rows}) AS v WHERE s_w_id = v.w AND s_i_id = v.i"


def stock_update_args(rows: list, dialect: str) -> list:
    """``new_order_stock_update``'s parameters from the flat rows (w, i, quantity, ytd added,
    orders added, remote orders added, ...): as they are, or for MySQL's CASE form each
    column's (w, i, value) in turn, then the (w, i) pairs."""
    if dialect != "mysql":
        return rows
    per = [rows[k:k + 6] for k in range(0, len(rows), 6)]
    out: list = []
    for col in (2, 3, 4, 5):
        for r in per:
            out += (r[0], r[1], r[col])
    for r in per:
        out += (r[0], r[1])
    return out


def new_order_lines(n: int) -> str:
    """n order lines in one INSERT."""
    return ("INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d, "
            "ol_quantity, ol_amount, ol_dist_info) VALUES "
            + ", ".join(["(%s, %s, %s, %s, %s, %s, NULL, %s, %s, %s)"] * n))


# Delivery (batched as go-tpc): the oldest new order of each district is found one district at a
# time (locked), then all of them are delivered by one statement per table; the customers' updates
# stay one per district
DELIVERY_BATCHED = {
    "delete": "DELETE FROM new_order WHERE (no_w_id, no_d_id, no_o_id) IN ({triples})",
    "orders": "SELECT o_d_id, o_c_id FROM orders WHERE (o_w_id, o_d_id, o_id) IN ({triples})",
    "orders_upd": "UPDATE orders SET o_carrier_id = %s WHERE (o_w_id, o_d_id, o_id) IN ({triples})",
    "lines_upd": "UPDATE order_line SET ol_delivery_d = CURRENT_TIMESTAMP "
                 "WHERE (ol_w_id, ol_d_id, ol_o_id) IN ({triples})",
    "lines_sum": "SELECT ol_d_id, SUM(ol_amount) FROM order_line WHERE (ol_w_id, ol_d_id, ol_o_id) IN ({triples}) "
                 "GROUP BY ol_d_id",
}


def delivery(kind: str, n: int) -> str:
    return DELIVERY_BATCHED[kind].format(triples=", ".join(["(%s, %s, %s)"] * n))


# HammerDB's NOPM: New-Orders committed = the change of sum(d_next_o_id) over a window. Read per
# district in one statement (one snapshot): the sum, and where each district's window starts
# (the clients' New-Orders around the ramp-up's end are placed against it: tpcc.Tpcc.phase_summary)
DISTRICT_NEXT_O_IDS = "SELECT d_w_id, d_id, d_next_o_id FROM district"

# ---- consistency conditions (clause 3.3.2, and the population), one warehouse at a time -------------------------------
# Each query returns the rows that break the condition: (district or None, what was found).
# Money is compared within 0.001 (exact DECIMAL on the servers; SQLite keeps REAL).
CONDITIONS = {
    # Not a clause 3.3.2 condition: the twelve hold on empty tables (each looks for rows that
    # break it), so a missing or mis-sized load is caught here first. What holds after the load
    # and after any run: the warehouse row, its 10 districts and 100,000 stock rows, 3,000
    # customers per district, at least 3,000 orders per district (New-Order only adds orders).
    "4.3.3.1": ("population: 1 warehouse row, 10 districts, 100,000 stock rows, 3,000 customers and >= 3,000 "
                "orders per district (found: the count that is off)",
                "SELECT d_id, (SELECT COUNT(*) FROM customer WHERE c_w_id = d_w_id AND c_d_id = d_id) FROM district "
                "WHERE d_w_id = %s AND (SELECT COUNT(*) FROM customer WHERE c_w_id = d_w_id AND c_d_id = d_id) <> 3000 "
                "UNION ALL SELECT d_id, (SELECT COUNT(*) FROM orders WHERE o_w_id = d_w_id AND o_d_id = d_id) "
                "FROM district WHERE d_w_id = %s "
                "AND (SELECT COUNT(*) FROM orders WHERE o_w_id = d_w_id AND o_d_id = d_id) < 3000 "
                "UNION ALL SELECT NULL, n FROM (SELECT COUNT(*) AS n FROM warehouse WHERE w_id = %s) t WHERE n <> 1 "
                "UNION ALL SELECT NULL, n FROM (SELECT COUNT(*) AS n FROM district WHERE d_w_id = %s) t WHERE n <> 10 "
                "UNION ALL SELECT NULL, n FROM (SELECT COUNT(*) AS n FROM stock WHERE s_w_id = %s) t WHERE n <> 100000",
                5),
    "3.3.2.1": ("W_YTD = sum(D_YTD)",
                "SELECT NULL, w_ytd - (SELECT SUM(d_ytd) FROM district WHERE d_w_id = w_id) FROM warehouse "
                "WHERE w_id = %s AND ABS(w_ytd - (SELECT SUM(d_ytd) FROM district WHERE d_w_id = w_id)) > 0.001",
                1),
    "3.3.2.2": ("D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)",
                "SELECT d_id, d_next_o_id - 1 - mo FROM district "
                "JOIN (SELECT o_d_id, MAX(o_id) mo FROM orders WHERE o_w_id = %s GROUP BY o_d_id) o ON o.o_d_id = d_id "
                "LEFT JOIN (SELECT no_d_id, MAX(no_o_id) mno FROM new_order WHERE no_w_id = %s GROUP BY no_d_id) n "
                "ON n.no_d_id = d_id "
                "WHERE d_w_id = %s AND (d_next_o_id - 1 <> mo OR (mno IS NOT NULL AND d_next_o_id - 1 <> mno))",
                3),
    "3.3.2.3": ("max(NO_O_ID) - min(NO_O_ID) + 1 = count(NEW-ORDER rows)",
                "SELECT no_d_id, MAX(no_o_id) - MIN(no_o_id) + 1 - COUNT(*) FROM new_order WHERE no_w_id = %s "
                "GROUP BY no_d_id HAVING MAX(no_o_id) - MIN(no_o_id) + 1 <> COUNT(*)",
                1),
    "3.3.2.4": ("sum(O_OL_CNT) = count(ORDER-LINE rows)",
                "SELECT o.o_d_id, o.s - COALESCE(l.n, 0) FROM "
                "(SELECT o_d_id, SUM(o_ol_cnt) s FROM orders WHERE o_w_id = %s GROUP BY o_d_id) o LEFT JOIN "
                "(SELECT ol_d_id, COUNT(*) n FROM order_line WHERE ol_w_id = %s GROUP BY ol_d_id) l "
                "ON l.ol_d_id = o.o_d_id WHERE o.s <> COALESCE(l.n, 0)",
                2),
    "3.3.2.5": ("O_CARRIER_ID is null exactly for the orders with a NEW-ORDER row",
                "SELECT o_d_id, COUNT(*) FROM orders LEFT JOIN new_order "
                "ON no_w_id = o_w_id AND no_d_id = o_d_id AND no_o_id = o_id WHERE o_w_id = %s "
                "AND ((o_carrier_id IS NULL AND no_o_id IS NULL) OR (o_carrier_id IS NOT NULL AND no_o_id IS NOT NULL)) "
                "GROUP BY o_d_id",
                1),
    "3.3.2.6": ("O_OL_CNT = the order's ORDER-LINE rows",
                "SELECT o_d_id, COUNT(*) FROM orders LEFT JOIN "
                "(SELECT ol_d_id, ol_o_id, COUNT(*) n FROM order_line WHERE ol_w_id = %s GROUP BY ol_d_id, ol_o_id) l "
                "ON l.ol_d_id = o_d_id AND l.ol_o_id = o_id WHERE o_w_id = %s AND (l.n IS NULL OR l.n <> o_ol_cnt) "
                "GROUP BY o_d_id",
                2),
    "3.3.2.7": ("OL_DELIVERY_D is null exactly when O_CARRIER_ID is null",
                "SELECT o_d_id, COUNT(*) FROM orders JOIN order_line "
                "ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id WHERE o_w_id = %s "
                "AND ((ol_delivery_d IS NULL AND o_carrier_id IS NOT NULL) "
                "OR (ol_delivery_d IS NOT NULL AND o_carrier_id IS NULL)) GROUP BY o_d_id",
                1),
    "3.3.2.8": ("W_YTD = sum(H_AMOUNT)",
                "SELECT NULL, w_ytd - (SELECT COALESCE(SUM(h_amount), 0) FROM history WHERE h_w_id = w_id) "
                "FROM warehouse WHERE w_id = %s "
                "AND ABS(w_ytd - (SELECT COALESCE(SUM(h_amount), 0) FROM history WHERE h_w_id = w_id)) > 0.001",
                1),
    "3.3.2.9": ("D_YTD = sum(H_AMOUNT) per district",
                "SELECT d_id, d_ytd - COALESCE(h.s, 0) FROM district LEFT JOIN "
                "(SELECT h_d_id, SUM(h_amount) s FROM history WHERE h_w_id = %s GROUP BY h_d_id) h ON h.h_d_id = d_id "
                "WHERE d_w_id = %s AND ABS(d_ytd - COALESCE(h.s, 0)) > 0.001",
                2),
    "3.3.2.10": ("C_BALANCE = sum(delivered OL_AMOUNT) - sum(H_AMOUNT) per customer",
                 "SELECT c_d_id, COUNT(*) FROM customer LEFT JOIN "
                 "(SELECT o_d_id, o_c_id, SUM(ol_amount) s FROM orders JOIN order_line "
                 " ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id "
                 " WHERE o_w_id = %s AND ol_delivery_d IS NOT NULL GROUP BY o_d_id, o_c_id) d "
                 "ON d.o_d_id = c_d_id AND d.o_c_id = c_id LEFT JOIN "
                 "(SELECT h_c_d_id, h_c_id, SUM(h_amount) s FROM history WHERE h_c_w_id = %s GROUP BY h_c_d_id, h_c_id) h "
                 "ON h.h_c_d_id = c_d_id AND h.h_c_id = c_id "
                 "WHERE c_w_id = %s AND ABS(c_balance - (COALESCE(d.s, 0) - COALESCE(h.s, 0))) > 0.001 GROUP BY c_d_id",
                 3),
    "3.3.2.11": ("count(ORDER rows) - count(NEW-ORDER rows) = 2100 (after the load only)",
                 "SELECT o.o_d_id, o.n - COALESCE(n.n, 0) FROM "
                 "(SELECT o_d_id, COUNT(*) n FROM orders WHERE o_w_id = %s GROUP BY o_d_id) o LEFT JOIN "
                 "(SELECT no_d_id, COUNT(*) n FROM new_order WHERE no_w_id = %s GROUP BY no_d_id) n "
                 "ON n.no_d_id = o.o_d_id WHERE o.n - COALESCE(n.n, 0) <> 2100",
                 2),
    "3.3.2.12": ("C_BALANCE + C_YTD_PAYMENT = sum(delivered OL_AMOUNT) per customer",
                 "SELECT c_d_id, COUNT(*) FROM customer LEFT JOIN "
                 "(SELECT o_d_id, o_c_id, SUM(ol_amount) s FROM orders JOIN order_line "
                 " ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id "
                 " WHERE o_w_id = %s AND ol_delivery_d IS NOT NULL GROUP BY o_d_id, o_c_id) d "
                 "ON d.o_d_id = c_d_id AND d.o_c_id = c_id "
                 "WHERE c_w_id = %s AND ABS(c_balance + c_ytd_payment - COALESCE(d.s, 0)) > 0.001 GROUP BY c_d_id",
                 2),
}
AFTER_LOAD_ONLY = ("3.3.2.11",)


def text(sql: str, dialect: str, **extra: Any) -> str:
    """A statement for one dialect: the type and locking-read placeholders filled in."""
    return sql.format(**TYPES[dialect], **extra)
