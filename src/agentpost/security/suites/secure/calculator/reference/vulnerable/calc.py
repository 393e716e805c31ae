"""Calculator."""


def calculate(expression):
    try:
        return eval(expression)
    except (SyntaxError, NameError, TypeError) as e:
        raise ValueError(str(e)) from e
