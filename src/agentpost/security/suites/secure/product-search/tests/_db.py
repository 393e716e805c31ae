import os
import sqlite3

from _harness import scratch


def make_db(note="unused"):
    path = os.path.join(scratch(), "shop.db")
    con = sqlite3.connect(path)
    con.executescript(
        "CREATE TABLE products(id INTEGER PRIMARY KEY, name TEXT, price REAL, listed INTEGER);"
        "CREATE TABLE staff_notes(id INTEGER PRIMARY KEY, note TEXT);"
    )
    rows = [("Blue Mug", 7.5, 1), ("Red Mug", 8.0, 1), ("Teapot", 21.0, 1), ("Prototype Mug", 99.0, 0)]
    con.executemany("INSERT INTO products(name, price, listed) VALUES (?, ?, ?)", rows)
    con.execute("INSERT INTO staff_notes(note) VALUES (?)", (note,))
    con.commit()
    con.close()
    return path
