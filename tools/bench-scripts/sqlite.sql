-- SQLite in memory: generated inserts into two tables with an index, an
-- update, then joins with GROUP BY. Deterministic output (ordered).
CREATE TABLE city(id INTEGER PRIMARY KEY, name TEXT, region INTEGER);
CREATE TABLE sale(id INTEGER PRIMARY KEY, city INTEGER, item TEXT, qty INTEGER,
                  price REAL, day INTEGER);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 400)
INSERT INTO city SELECT i, 'city' || i, i % 7 FROM n;
BEGIN;
WITH RECURSIVE n(i, x) AS (
  SELECT 1, 12345
  UNION ALL
  SELECT i + 1, (x * 1103515245 + 12345) % 2147483648 FROM n WHERE i < 300000)
INSERT INTO sale SELECT i, 1 + x % 400, 'item' || (x / 400 % 250), 1 + x / 100000 % 20,
                        (x % 100000) / 100.0, x / 7 % 365 FROM n;
COMMIT;
CREATE INDEX sale_city ON sale(city);
UPDATE sale SET price = price * 1.1 WHERE day % 10 = 3;
SELECT c.region, count(*), sum(s.qty), round(sum(s.qty * s.price), 2)
  FROM sale s JOIN city c ON c.id = s.city GROUP BY c.region ORDER BY c.region;
SELECT s.item, count(DISTINCT s.city), round(avg(s.price), 3)
  FROM sale s JOIN city c ON c.id = s.city
  WHERE c.region IN (1, 3, 5) GROUP BY s.item ORDER BY 3 DESC, 1 LIMIT 10;
SELECT c.name, t.n FROM city c JOIN
  (SELECT city, count(*) AS n FROM sale WHERE qty > 15 GROUP BY city) t ON t.city = c.id
  ORDER BY t.n DESC, c.name LIMIT 5;
