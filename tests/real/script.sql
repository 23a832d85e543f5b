-- tests/real_programs.rs: sqlite3 runs this natively and under hotlift, in
-- an empty working directory (the database file t.db is created there).
-- Deterministic: no random(), no dates from the clock.
.headers on
.mode list
PRAGMA journal_mode = DELETE;
CREATE TABLE item(id INTEGER PRIMARY KEY, name TEXT NOT NULL, grp INTEGER, price REAL);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)
INSERT INTO item(name, grp, price)
  SELECT printf('item-%05d-%s', i, substr('abcdefghij', 1 + i % 10, 3)),
         (i * 7919) % 13, round((i * 37 % 1000) / 7.0, 2)
  FROM n;
CREATE INDEX item_grp ON item(grp, price);
SELECT count(*), sum(grp), round(sum(price), 2), min(name), max(name) FROM item;
SELECT grp, count(*) AS n, round(avg(price), 3) AS avg_price,
       group_concat(id, ',') FILTER (WHERE id % 397 = 0) AS some_ids
  FROM item GROUP BY grp ORDER BY grp;
SELECT name, price, rank() OVER (PARTITION BY grp ORDER BY price DESC, id) AS r
  FROM item WHERE grp = 5 ORDER BY r LIMIT 8;
CREATE TABLE tag(item_id INTEGER REFERENCES item(id), tag TEXT);
INSERT INTO tag SELECT id, CASE WHEN price > 100 THEN 'dear' ELSE 'cheap' END
  FROM item WHERE id % 3 = 0;
SELECT t.tag, count(*), round(sum(i.price), 2) FROM tag t JOIN item i ON i.id = t.item_id
  GROUP BY t.tag ORDER BY t.tag;
BEGIN;
UPDATE item SET price = price * 2 WHERE grp IN (1, 2, 3);
DELETE FROM item WHERE id % 11 = 0;
COMMIT;
SELECT count(*), round(sum(price), 2) FROM item;
SELECT json_object('n', count(*), 'groups', json_group_array(DISTINCT grp)) FROM item;
SELECT upper(substr(name, 1, 4)) || lower(' ABC'), length(name), instr(name, '-0')
  FROM item ORDER BY id DESC LIMIT 3;
WITH RECURSIVE fib(a, b, k) AS (SELECT 0, 1, 0 UNION ALL SELECT b, a + b, k + 1 FROM fib WHERE k < 60)
SELECT k, a FROM fib WHERE k % 15 = 0;
SELECT printf('%.6f|%10.3e|%x|%q', 355.0 / 113, 6.02214076e23, 48879, 'it''s');
PRAGMA integrity_check;
VACUUM;
SELECT name FROM sqlite_master ORDER BY name;
.mode box
SELECT grp, count(*) AS n FROM item WHERE grp < 4 GROUP BY grp;
