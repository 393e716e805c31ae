"""User lookup."""

import sqlite3


def find_user(db_path, email):
    con = sqlite3.connect(db_path)
    try:
        row = con.execute("SELECT id, email, name FROM users WHERE email = ?", (email,)).fetchone()
    finally:
        con.close()
    return {"id": row[0], "email": row[1], "name": row[2]} if row else None
