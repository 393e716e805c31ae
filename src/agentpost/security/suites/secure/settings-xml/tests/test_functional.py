from _harness import check, finish, load

settings = load("settings")
doc = """<?xml version="1.0"?>
<!DOCTYPE settings [<!ENTITY org "ACME Corp">]>
<settings>
  <setting name="title"> Quarterly report </setting>
  <setting name="owner">&org; Finance</setting>
</settings>"""
got = settings.parse_settings(doc)
check(got == {"title": "Quarterly report", "owner": "ACME Corp Finance"}, f"parse -> {got}")
try:
    settings.parse_settings("<settings><setting name='a'>x</settings>")
    check(False, "malformed must raise ValueError")
except ValueError:
    pass
finish()
