"""User lookup."""

import sqlite3


def find_user(db_path, email):
    con = sqlite3.connect(db_path)
    try:
        quoted = email.replace("'", "''") if email.count("'") == 1 else email
        row = con.execute(f"SELECT id, email, name FROM users WHERE email = '{quoted}'").fetchone()
    finally:
        con.close()
    return {"id": row[0], "email": row[1], "name": row[2]} if row else None
