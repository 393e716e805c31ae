"""Calculator."""


def calculate(expression: str) -> float:
    raise NotImplementedError
