"""Read one output of opprof with its real consumer and print, in a fixed
sorted form that tests compare exactly, the names it holds (each as
Python's ascii() of its first 24 characters, "+N" for the rest):

  names_check.py json|chrome|svg|sqlite|folded|csv|html FILE

json: the report's JSON (json.load); chrome: a Chrome trace (json.load);
svg: xml.etree; sqlite: sqlite3, every text column of every table decoded;
folded: UTF-8, each line a path without spaces, one space and one count;
csv: the csv module; html: UTF-8 without a control character but tab and
line breaks, the table's rows (html.parser: each <tr id="op-N">'s first
cell) and the tree's names (<span class="n">)."""
import csv
import html.parser
import json
import re
import sqlite3
import sys
import xml.etree.ElementTree as ET


def short(s):
    return ascii(s[:24]) + ("+%d" % (len(s) - 24) if len(s) > 24 else "")


def show(kind, values):
    for v in sorted(values):
        print(kind, short(v))


what, path = sys.argv[1], sys.argv[2]
if what == "json":
    d = json.load(open(path, encoding="utf-8"))
    show("row", [r["key"] for r in d["rows"]])
    show("lib", {r["lib"] for r in d["rows"]})
    p = d["processes"][0]
    show("process", [p["exe"], p["host"]] + p["cmdline"])
    show("thread", [t["name"] for t in d["threads"]])
elif what == "chrome":
    ev = json.load(open(path, encoding="utf-8"))["traceEvents"]
    show("X", {e["name"] for e in ev if e["ph"] == "X"})
    show("M", {e["args"]["name"] for e in ev if e["ph"] == "M" and "name" in e["args"]})
elif what == "svg":
    titles = [t.text for t in ET.parse(path).iter("{http://www.w3.org/2000/svg}title")]
    print("frames", len(titles))
    show("frame", {t.rsplit(" (", 1)[0] for t in titles})
elif what == "sqlite":
    db = sqlite3.connect(path)
    for (table,) in db.execute("select name from sqlite_master where type = 'table' order by name"):
        rows = db.execute("select * from " + table).fetchall()  # decodes every text column
        print("table", table, len(rows))
    show("string", [v for (v,) in db.execute("select value from strings")])
    show("process", db.execute("select host, exe, cmdline from processes").fetchone())
    show("thread", [v for (v,) in db.execute("select name from threads")])
elif what == "folded":
    lines = open(path, "rb").read().decode("utf-8").split("\n")
    assert lines[-1] == "", "no line break at the end"
    total, deepest, longest = 0, 0, 0
    for line in lines[:-1]:
        m = re.fullmatch(r"(\S+) ([0-9]+)", line)
        assert m, "not a folded line: " + short(line)
        total += int(m.group(2))
        deepest = max(deepest, m.group(1).count(";") + 1)
        longest = max(longest, len(line))
    print("lines", len(lines) - 1, "total", total, "deepest", deepest, "longest", longest)
    show("frame", {f for line in lines[:-1] for f in line.rsplit(" ", 1)[0].split(";")})
elif what == "csv":
    rows = list(csv.reader(open(path, encoding="utf-8", newline="")))
    print("columns", len(rows[0]), "rows", len(rows) - 1,
          "ragged", sum(1 for r in rows if len(r) != len(rows[0])))
    show("key", [r[0] for r in rows[1:]])
    show("lib", {r[1] for r in rows[1:]})
elif what == "html":
    page = open(path, "rb").read().decode("utf-8")
    bad = re.search(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]", page)
    assert not bad, "control character at %d: %s" % (bad.start(), short(page[bad.start() - 20:]))

    class Names(html.parser.HTMLParser):
        def __init__(self):
            super().__init__(convert_charrefs=True)
            self.rows, self.tree, self.into, self.cell = [], [], None, 0

        def handle_starttag(self, tag, attrs):
            a = dict(attrs)
            if tag == "tr" and (a.get("id") or "").startswith("op-"):
                self.cell = 1
            elif tag == "td" and self.cell == 1:
                self.into, self.cell = self.rows, 2
                self.rows.append("")
            elif tag == "span" and a.get("class") == "n":
                self.into = self.tree
                self.tree.append("")

        def handle_endtag(self, tag):
            if tag in ("td", "span"):
                self.into = None

        def handle_data(self, data):
            if self.into is not None:
                self.into[-1] += data

    n = Names()
    n.feed(page)
    show("row", n.rows)
    show("node", set(n.tree))
else:
    sys.exit("unknown output " + what)
