import os
import sqlite3

from _harness import scratch


def make_db(token="unused"):
    path = os.path.join(scratch(), "app.db")
    con = sqlite3.connect(path)
    con.executescript(
        "CREATE TABLE users(id INTEGER PRIMARY KEY, email TEXT, name TEXT);"
        "CREATE TABLE api_keys(user_id INTEGER, token TEXT);"
    )
    con.executemany("INSERT INTO users(email, name) VALUES (?, ?)", [("ann@example.com", "Ann"), ("o'brien@example.com", "Pat O'Brien"), ("admin@example.com", "Admin")])
    con.execute("INSERT INTO api_keys VALUES (3, ?)", (token,))
    con.commit()
    con.close()
    return path
